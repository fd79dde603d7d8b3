"""The release wheel's size, recorded beside the release's scores."""

import json

import pytest

from spacy_biolm.wheels import record_wheel_size


def test_the_wheels_size_is_recorded_in_the_results_and_nothing_else_changes(tmp_path):
    results = tmp_path / "release.json"
    results.write_text(json.dumps({"profile": "default", "components": [{"component": "ner"}]}), encoding="utf8")
    wheel = tmp_path / "en_bio_electra-0.2.0-py3-none-any.whl"
    wheel.write_bytes(b"x" * 1234)
    assert record_wheel_size(results, wheel) == {"file": wheel.name, "bytes": 1234}
    record = json.loads(results.read_text(encoding="utf8"))
    assert record == {"profile": "default", "components": [{"component": "ner"}], "wheel": {"file": wheel.name, "bytes": 1234}}
    with pytest.raises(FileNotFoundError, match="missing.json does not exist"):
        record_wheel_size(tmp_path / "missing.json", wheel)


def test_a_rebuild_does_not_ship_the_readme_of_an_earlier_build(tmp_path, monkeypatch):
    import importlib

    from spacy_biolm.wheels import build_pipeline_wheel

    spacy_package = importlib.import_module("spacy.cli.package")  # the module: spacy.cli.package is also a function

    pipeline = tmp_path / "pipeline"
    pipeline.mkdir()
    (pipeline / "meta.json").write_text(json.dumps({"lang": "en", "name": "pipeline", "version": "0.0.0"}), encoding="utf8")
    stale = tmp_path / "packages" / "en_bio_electra-0.2.0" / "README.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("| `answer_reranker` | MRR 0.283 |  <- an earlier build's scores", encoding="utf8")
    seen = {}

    def package(input_dir, output_dir, **kwargs):
        # What spacy package finds: it keeps an existing README.md instead of writing it from the meta.
        seen["stale readme"] = stale.exists()
        wheel = output_dir / "en_bio_electra-0.2.0" / "dist" / "en_bio_electra-0.2.0-py3-none-any.whl"
        wheel.parent.mkdir(parents=True)
        wheel.write_bytes(b"wheel")

    monkeypatch.setattr(spacy_package, "package", package)
    wheel = build_pipeline_wheel(pipeline, tmp_path / "packages", "bio_electra", "0.2.0")
    assert seen == {"stale readme": False} and wheel.read_bytes() == b"wheel"
