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
