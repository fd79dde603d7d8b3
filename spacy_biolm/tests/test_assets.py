"""Assets come from the mirror only when their checksum matches; otherwise from their URL (or git
repository), which ``url_map`` can point at a stand-in server; every asset `all` needs has one."""

import contextlib
import functools
import hashlib
import http.server
import shutil
import threading
from pathlib import Path

import pytest

from spacy_biolm.assets import asset_checksum, dir_checksum, fetch_assets, lay_out_by_url, parse_url_map, rewrite_url
from spacy_biolm.project_steps import load_project
from spacy_biolm.testing import REPO, SHARED_DATA


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
    assert report == {"present": [], "mirror": ["assets/ner/good.tsv"], "downloaded": ["assets/ner/stale.tsv"], "skipped": []}
    assert (project / "assets/ner/stale.tsv").read_text() == "stale"
    assert fetch_assets(project, mirror)["present"] == ["assets/ner/good.tsv", "assets/ner/stale.tsv"]


def test_an_asset_that_cannot_be_had_is_an_error(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text("title: t\nassets:\n  - dest: assets/x.tsv\n    description: no url\n")
    with pytest.raises(FileNotFoundError, match="assets/x.tsv"):
        fetch_assets(project, tmp_path / "empty_mirror")


def test_extra_assets_come_from_the_mirror_but_are_downloaded_only_when_asked_for(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "plus.jsonl").write_text("{}")
    upstream = tmp_path / "upstream.txt"
    upstream.write_text("up")
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text(
        f"title: t\nassets:\n  - dest: assets/plus.jsonl\n    checksum: {_md5('{}')}\n    extra: true\n"
        f"  - dest: assets/up.txt\n    url: {upstream}\n    checksum: {_md5('up')}\n    extra: true\n"
    )
    assert fetch_assets(project, mirror) == {"present": [], "mirror": ["assets/plus.jsonl"], "downloaded": [],
                                             "skipped": ["assets/up.txt"]}
    assert not (project / "assets/up.txt").exists()
    assert fetch_assets(project, mirror, extra=True)["downloaded"] == ["assets/up.txt"]
    (project / "assets/plus.jsonl").unlink()
    # A mirror-only extra asset without the mirror: skipped (its workflow reports it missing), the rest fetched.
    assert fetch_assets(project, None, extra=True) == {"present": ["assets/up.txt"], "mirror": [], "downloaded": [],
                                                       "skipped": ["assets/plus.jsonl"]}
    (project / "project.yml").write_text(f"title: t\nassets:\n  - dest: assets/plus.jsonl\n    checksum: {_md5('{}')}\n")
    with pytest.raises(FileNotFoundError, match="assets/plus.jsonl is not in the mirror and has no URL"):
        fetch_assets(project, None)


def test_a_directory_checksum_covers_names_and_contents_not_git(tmp_path):
    tree = tmp_path / "tree"
    (tree / "text").mkdir(parents=True)
    (tree / "text" / "1.txt").write_text("a")
    (tree / "LICENSE").write_text("gpl")
    expected = hashlib.md5(f"LICENSE\t{_md5('gpl')}\ntext/1.txt\t{_md5('a')}\n".encode()).hexdigest()
    assert dir_checksum(tree) == asset_checksum(tree) == expected
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/master")
    assert dir_checksum(tree) == expected
    (tree / "text" / "1.txt").rename(tree / "text" / "2.txt")
    assert dir_checksum(tree) != expected
    assert asset_checksum(tree / "LICENSE") == _md5("gpl")


def test_url_prefix_map_rewrites_the_first_matching_prefix():
    url_map = parse_url_map(["https://github.com/=http://127.0.0.1:1/github.com/", "https://=http://other/"])
    assert rewrite_url("https://github.com/a/b", url_map) == "http://127.0.0.1:1/github.com/a/b"
    assert rewrite_url("https://raw.githubusercontent.com/x", url_map) == "http://other/raw.githubusercontent.com/x"
    assert rewrite_url("s3://bucket/x", url_map) == "s3://bucket/x"
    with pytest.raises(ValueError, match="FROM=TO"):
        parse_url_map(["https://github.com"])


def _tiny_project(tmp_path):
    """A project of two URL files and one git directory asset, with a mirror holding all three."""
    mirror = tmp_path / "mirror"
    (mirror / "ner").mkdir(parents=True)
    (mirror / "ner" / "train.tsv").write_text("IL\tB\n")
    (mirror / "ner" / "test.tsv").write_text("TP53\tB\n")
    tree = mirror / "hoc_raw"
    for sub, name, text in (("text", "1.txt", "One .\n"), ("labels", "1.txt", "< "), ("", "LICENSE", "GPL")):
        (tree / sub).mkdir(parents=True, exist_ok=True)
        (tree / sub / name).write_text(text)
    project = tmp_path / "project"
    project.mkdir()
    (project / "project.yml").write_text(
        "title: t\nassets:\n"
        f"  - dest: assets/ner/train.tsv\n    url: https://raw.example.org/c0ffee/data/train.tsv\n    checksum: {_md5('IL' + chr(9) + 'B' + chr(10))}\n"
        f"  - dest: assets/ner/test.tsv\n    url: https://raw.example.org/c0ffee/data/test.tsv\n    checksum: {_md5('TP53' + chr(9) + 'B' + chr(10))}\n"
        "  - dest: assets/hoc_raw\n    git:\n      repo: https://git.example.org/sb895/Hallmarks-of-Cancer\n"
        f"      branch: master\n      path: \"\"\n    checksum: {dir_checksum(tree)}\n"
    )
    return project, mirror


def test_a_directory_asset_is_copied_from_the_mirror_when_its_checksum_matches(tmp_path):
    project, mirror = _tiny_project(tmp_path)
    assert fetch_assets(project, mirror)["mirror"] == ["assets/ner/train.tsv", "assets/ner/test.tsv", "assets/hoc_raw"]
    assert (project / "assets/hoc_raw/text/1.txt").read_text() == "One .\n"
    assert fetch_assets(project, mirror)["present"] == ["assets/ner/train.tsv", "assets/ner/test.tsv", "assets/hoc_raw"]
    (mirror / "hoc_raw" / "labels" / "1.txt").write_text("<Resisting cell death--")
    (project / "assets/hoc_raw/LICENSE").unlink()
    with pytest.raises(FileNotFoundError, match="Could not clone https://git.example.org"):
        fetch_assets(project, mirror)  # the changed mirror copy is refused, and the repository is unreachable


@contextlib.contextmanager
def _serve(root):
    """A static HTTP server on 127.0.0.1 (a free port) serving ``root``; yields its base URL."""
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_without_a_mirror_every_asset_is_downloaded_or_cloned_through_the_url_prefix_map(tmp_path):
    project, mirror = _tiny_project(tmp_path)
    standin = tmp_path / "standin"
    assert lay_out_by_url(project, mirror, standin) == {"files": ["assets/ner/train.tsv", "assets/ner/test.tsv"], "repos": ["assets/hoc_raw"]}
    with _serve(standin) as base:
        url_map = [("https://raw.example.org/", f"{base}/raw.example.org/"), ("https://git.example.org/", f"{base}/git.example.org/")]
        report = fetch_assets(project, None, url_map=url_map)
        assert report["downloaded"] == ["assets/ner/train.tsv", "assets/ner/test.tsv", "assets/hoc_raw"]
        assert not (project / "assets/hoc_raw/.git").exists()
        assert fetch_assets(project, None, url_map=url_map)["present"] == report["downloaded"]
        # A download whose checksum differs is an error, and so is a URL the server does not have.
        (standin / "raw.example.org/c0ffee/data/test.tsv").write_text("changed")
        (project / "assets/ner/test.tsv").unlink()
        with pytest.raises(ValueError, match="assets/ner/test.tsv fetched from .* has checksum"):
            fetch_assets(project, None, url_map=url_map)
        (standin / "raw.example.org/c0ffee/data/test.tsv").unlink()
        (project / "assets/ner/test.tsv").unlink()
        with pytest.raises(FileNotFoundError, match="Could not fetch"):
            fetch_assets(project, None, url_map=url_map)
        assert not (project / "assets/ner/test.tsv").exists() and not (project / "assets/ner/test.tsv.part").exists()


PROJECT = load_project(REPO)
COMMANDS = {command["name"]: command for command in PROJECT["commands"]}


def _assets_of_all():
    """The assets the workflow ``all`` reads: each dep of its commands that is an asset or a
    folder of assets stands for those assets."""
    needed = set()
    for name in PROJECT["workflows"]["all"]:
        for dep in COMMANDS[name].get("deps", []):
            for asset in PROJECT["assets"]:
                if asset["dest"] == dep or Path(dep) in Path(asset["dest"]).parents:
                    needed.add(asset["dest"])
    return needed


def test_every_asset_has_a_url_and_checksum_or_is_extra_and_all_needs_no_extra_asset():
    needed = _assets_of_all()
    assert {"assets/hoc_raw", "assets/ner/NCBI-disease/mtl_iob/train.tsv", "assets/qa_yesno/BioASQ/bio_electra/train.tsv"} <= needed
    for asset in PROJECT["assets"]:
        fetchable = bool(asset.get("url") or asset.get("git")) and bool(asset.get("checksum"))
        assert fetchable or asset.get("extra"), f"{asset['dest']} has no URL (or git) and checksum and is not extra"
        if asset["dest"] in needed:
            assert fetchable and not asset.get("extra"), f"workflow all needs {asset['dest']}: it must have a URL and a checksum"


@pytest.mark.skipif(shutil.which("git") is None or not (SHARED_DATA / "hoc_raw").is_dir(), reason="needs git and the corpus mirror")
def test_the_mirror_holds_every_asset_all_needs_with_its_checksum():
    """The mirror serves as the stand-in for the upstream hosts (lay_out_by_url); its copies are
    the upstream files, so their checksums are the ones project.yml names."""
    for asset in PROJECT["assets"]:
        if asset["dest"] in _assets_of_all():
            source = SHARED_DATA.joinpath(*Path(asset["dest"]).parts[1:])
            assert asset_checksum(source) == asset["checksum"], asset["dest"]


@pytest.mark.skipif(shutil.which("git") is None or not (SHARED_DATA / "hoc_raw").is_dir(), reason="needs git and the corpus mirror")
def test_every_asset_all_needs_resolves_by_url_without_the_mirror(tmp_path):
    """The project's own assets, the mirror laid out by URL behind a local server standing in for
    raw.githubusercontent.com, github.com and rajpurkar.github.io (SQuAD): everything `all` needs is downloaded or cloned, with
    its checksum (fetch_assets checks each), and nothing extra is fetched."""
    project = tmp_path / "project"
    project.mkdir()
    shutil.copyfile(REPO / "project.yml", project / "project.yml")
    laid = lay_out_by_url(project, SHARED_DATA, tmp_path / "standin")
    assert set(laid["files"] + laid["repos"]) == _assets_of_all()
    with _serve(tmp_path / "standin") as base:
        url_map = [(f"https://{host}/", f"{base}/{host}/") for host in ("raw.githubusercontent.com", "github.com", "rajpurkar.github.io")]
        report = fetch_assets(project, None, url_map=url_map)
    assert set(report["downloaded"]) == _assets_of_all() and not report["mirror"] and not report["present"]
    assert set(report["skipped"]) == {a["dest"] for a in PROJECT["assets"] if a.get("extra")}
    assert len(list((project / "assets/hoc_raw/text").glob("*.txt"))) == 1852


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_assets_command_takes_the_url_prefix_map_from_its_option_or_the_environment(tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    project, mirror = _tiny_project(tmp_path)
    lay_out_by_url(project, mirror, tmp_path / "standin")
    bad = CliRunner().invoke(app, ["data", "assets", str(project), "--url-prefix-map", "https://raw.example.org/"])
    assert bad.exit_code == 1 and "expected FROM=TO" in bad.output
    with _serve(tmp_path / "standin") as base:
        pairs = f"https://raw.example.org/={base}/raw.example.org/ https://git.example.org/={base}/git.example.org/"
        result = CliRunner().invoke(app, ["data", "assets", str(project)], env={"SPACY_BIOLM_URL_PREFIX_MAP": pairs})
    assert result.exit_code == 0, result.output
    assert "3 downloaded" in result.output and dir_checksum(project / "assets/hoc_raw") == dir_checksum(mirror / "hoc_raw")
