"""Assets come from the mirror only when their checksum matches; otherwise from their URL."""

import hashlib

import pytest

from spacy_biolm.assets import fetch_assets


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def test_mirror_copies_verified_files_and_downloads_the_rest(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "ner").mkdir(parents=True)
    (mirror / "ner" / "good.tsv").write_text("good")
    (mirror / "ner" / "stale.tsv").write_text("changed upstream")
    upstream = tmp_path / "upstream_stale.tsv"  # a local "URL" stands in for the download
    upstream.write_text("stale")
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text(
        "title: t\nassets:\n"
        f"  - dest: assets/ner/good.tsv\n    url: https://example.invalid/good.tsv\n    checksum: {_md5('good')}\n"
        f"  - dest: assets/ner/stale.tsv\n    url: {upstream}\n    checksum: {_md5('stale')}\n"
    )
    report = fetch_assets(project, mirror)
    assert report == {"present": [], "mirror": ["assets/ner/good.tsv"], "downloaded": ["assets/ner/stale.tsv"]}
    assert (project / "assets/ner/stale.tsv").read_text() == "stale"
    assert fetch_assets(project, mirror)["present"] == ["assets/ner/good.tsv", "assets/ner/stale.tsv"]


def test_an_asset_that_cannot_be_had_is_an_error(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text("title: t\nassets:\n  - dest: assets/x.tsv\n    description: no url\n")
    with pytest.raises(FileNotFoundError, match="assets/x.tsv"):
        fetch_assets(project, tmp_path / "empty_mirror")


def test_extra_assets_are_fetched_only_when_asked_for(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "plus.jsonl").write_text("{}")
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text(
        f"title: t\nassets:\n  - dest: assets/plus.jsonl\n    checksum: {_md5('{}')}\n    extra: true\n"
    )
    assert fetch_assets(project, mirror) == {"present": [], "mirror": [], "downloaded": []}
    assert fetch_assets(project, mirror, extra=True)["mirror"] == ["assets/plus.jsonl"]
