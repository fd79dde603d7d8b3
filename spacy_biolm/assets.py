"""Fetch a project's assets, taking each from a local mirror of the corpora when it is there.

project.yml names every asset with its upstream URL (or git repository) and MD5 checksum, and lays
assets out under ``assets/`` exactly as the mirror lays them out (``assets/ner/NCBI-disease/...``
is ``<mirror>/ner/NCBI-disease/...``; the directory asset ``assets/hoc_raw`` is the folder
``<mirror>/hoc_raw``). A mirrored file or folder is copied only if its checksum matches, so a
mirror can never substitute different data; whatever the mirror lacks is downloaded (a URL asset)
or cloned (a ``git`` asset: ``git: {repo, branch, path}``, as weasel defines it).

Checksums: a file's is the MD5 of its bytes (weasel's). A directory's (:func:`dir_checksum`) is
the MD5 of one line ``<relative path>\\t<MD5 of the file>\\n`` per file under it, the paths in
POSIX form sorted as strings, a top-level ``.git`` folder left out; so it changes when a file is
added, removed, renamed or changed, and not with file times, permissions or the clone's history.
(weasel's own directory checksum, the MD5 of the files' bytes run together, ignores names.)

Assets marked ``extra: true`` are needed by optional workflows only. Without ``extra`` they are
still copied from the mirror when it holds them (a local, verified copy), but never downloaded;
``extra=True`` (``spacy-biolm data assets --extra``) fetches them like the others.

``url_map`` (``--url-prefix-map FROM=TO``) rewrites the start of every URL and git repository
before anything is downloaded: a corporate mirror, or a local HTTP server standing in for the
upstream hosts (:func:`lay_out_by_url` builds such a tree from the mirror).
"""

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from wasabi import msg

__all__ = [
    "fetch_assets",
    "ASSETS_DIR",
    "asset_checksum",
    "dir_checksum",
    "parse_url_map",
    "rewrite_url",
    "lay_out_by_url",
]

ASSETS_DIR = "assets"

UrlMap = Sequence[Tuple[str, str]]


def dir_checksum(path: Path) -> str:
    """The checksum of a directory: MD5 over ``<relative POSIX path>\\t<file MD5>\\n`` per file,
    sorted by path, without a top-level ``.git`` folder (see the module docstring)."""
    path = Path(path)
    lines = []
    for sub in path.rglob("*"):
        rel = sub.relative_to(path)
        if rel.parts[0] == ".git" or not sub.is_file():
            continue
        lines.append(f"{rel.as_posix()}\t{hashlib.md5(sub.read_bytes()).hexdigest()}\n")
    return hashlib.md5("".join(sorted(lines)).encode("utf8")).hexdigest()


def asset_checksum(path: Path) -> str:
    """A file's MD5, or a directory's :func:`dir_checksum`."""
    path = Path(path)
    if path.is_dir():
        return dir_checksum(path)
    return hashlib.md5(path.read_bytes()).hexdigest()


def parse_url_map(pairs: Sequence[str]) -> List[Tuple[str, str]]:
    """``["FROM=TO", ...]`` -> ``[(FROM, TO), ...]``; ValueError for an item without ``=`` or FROM."""
    parsed = []
    for pair in pairs:
        source, sep, target = pair.partition("=")
        if not sep or not source:
            raise ValueError(f"URL prefix map {pair!r}: expected FROM=TO, e.g. https://raw.githubusercontent.com/=http://127.0.0.1:8000/")
        parsed.append((source, target))
    return parsed


def rewrite_url(url: str, url_map: UrlMap = ()) -> str:
    """``url`` with its prefix replaced by the first pair of ``url_map`` whose FROM it starts with."""
    for source, target in url_map:
        if url.startswith(source):
            return target + url[len(source):]
    return url


def fetch_assets(
    project_dir: Path,
    mirror: Optional[Path] = None,
    extra: bool = False,
    url_map: UrlMap = (),
) -> Dict[str, List[str]]:
    """Make every asset of ``project_dir/project.yml`` present; returns what came from where
    (``present``, ``mirror``, ``downloaded``; ``skipped``: extra assets neither mirrored nor asked
    for). Extra assets are copied from the mirror when it has them and downloaded only with
    ``extra``; ``url_map`` rewrites URL prefixes (:func:`rewrite_url`). FileNotFoundError when an
    asset can be had from nowhere; ValueError when a download's checksum does not match."""
    from weasel.util import load_project_config

    project_dir = Path(project_dir)
    config = load_project_config(project_dir)
    report: Dict[str, List[str]] = {"present": [], "mirror": [], "downloaded": [], "skipped": []}
    for asset in config.get("assets", []):
        dest = project_dir / asset["dest"]
        checksum = asset.get("checksum")
        if dest.exists() and (checksum is None or asset_checksum(dest) == checksum):
            report["present"].append(asset["dest"])
            continue
        source = _mirrored(mirror, asset["dest"])
        if source is not None and (checksum is None or asset_checksum(source) == checksum):
            _replace(dest, source)
            report["mirror"].append(asset["dest"])
            continue
        if asset.get("extra") and not extra:
            report["skipped"].append(asset["dest"])
            continue
        if source is not None:
            msg.warn(f"Mirror copy of {asset['dest']} has another checksum; fetching it instead")
        if "git" in asset:
            _clone(asset["git"], dest, url_map)
            where = asset["git"]["repo"]
        elif asset.get("url"):
            _download(rewrite_url(asset["url"], url_map), dest)
            where = asset["url"]
        elif asset.get("extra"):  # mirror-only data of an optional workflow: that workflow names it as missing
            msg.warn(f"Extra asset {asset['dest']} is not in the mirror and has no URL: skipped")
            report["skipped"].append(asset["dest"])
            continue
        else:
            raise FileNotFoundError(f"Asset {asset['dest']} is not in the mirror and has no URL")
        if checksum is not None and asset_checksum(dest) != checksum:
            raise ValueError(f"Asset {asset['dest']} fetched from {rewrite_url(where, url_map)} has checksum "
                             f"{asset_checksum(dest)}, project.yml says {checksum}")
        report["downloaded"].append(asset["dest"])
        msg.good(f"Fetched {asset['dest']} from {rewrite_url(where, url_map)}")
    return report


def _replace(dest: Path, source: Path) -> None:
    """Put a copy of the file or folder ``source`` at ``dest``, replacing what is there."""
    if dest.is_dir():
        shutil.rmtree(dest)
    elif dest.exists():
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        _copy_tree(source, dest)
    else:
        shutil.copyfile(source, dest)


def _copy_tree(source: Path, dest: Path) -> None:
    """Copy the files under ``source`` (not a top-level ``.git``) to ``dest``, contents only: a
    read-only mirror gives a writable copy, which a later fetch can replace."""
    dest.mkdir(parents=True, exist_ok=True)
    for sub in sorted(source.rglob("*")):
        rel = sub.relative_to(source)
        if rel.parts[0] == ".git":
            continue
        if sub.is_dir():
            (dest / rel).mkdir(parents=True, exist_ok=True)
        elif sub.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(sub, dest / rel)


def _download(url: str, dest: Path) -> None:
    """Download ``url`` (or copy a local path) to ``dest`` through a temporary file, so a failed
    download leaves nothing behind."""
    from weasel.util import download_file

    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    try:
        if Path(url).is_file():
            shutil.copyfile(url, partial)
        else:
            download_file(url, partial, force=True)
        if dest.is_dir():
            shutil.rmtree(dest)
        partial.replace(dest)
    except Exception as err:
        partial.unlink(missing_ok=True)
        raise FileNotFoundError(f"Could not fetch {url} to {dest}: {err}") from err


def _clone(git: Dict[str, str], dest: Path, url_map: UrlMap = ()) -> None:
    """Clone ``git["repo"]`` (``branch``, default master) into a temporary folder and put its
    ``path`` (``""``: the whole tree, without ``.git``) at ``dest``."""
    repo = rewrite_url(git["repo"], url_map)
    branch = git.get("branch") or "master"
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        done = subprocess.run(["git", "clone", "--quiet", "--branch", branch, repo, str(clone)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise FileNotFoundError(f"Could not clone {repo} (branch {branch}): {done.stderr.strip()}")
        source = (clone / git.get("path", "")).resolve()
        if clone.resolve() not in (source, *source.parents) or not source.exists():
            raise FileNotFoundError(f"{repo} (branch {branch}) has no {git.get('path')!r}")
        _replace(dest, source)


def _mirrored(mirror: Optional[Path], dest: str) -> Optional[Path]:
    if mirror is None:
        return None
    parts = Path(dest).parts
    if not parts or parts[0] != ASSETS_DIR:
        return None
    candidate = Path(mirror).joinpath(*parts[1:])
    return candidate if candidate.exists() else None


def lay_out_by_url(project_dir: Path, mirror: Path, out_dir: Path, extra: bool = False) -> Dict[str, List[str]]:
    """Lay the mirror's copies of the project's assets out under ``out_dir`` by URL, as a static
    HTTP server standing in for the upstream hosts serves them: the file of
    ``https://host/a/b.tsv`` at ``out_dir/host/a/b.tsv``, and a ``git`` asset's folder as a bare
    repository (one commit on its branch, ``git update-server-info`` run, so git clones it over
    plain HTTP) at ``out_dir/host/<repo path>``. Serve ``out_dir`` and fetch with
    ``--url-prefix-map https://host/=http://127.0.0.1:PORT/host/`` per host. Returns the
    ``files`` copied and ``repos`` built (by asset dest); extra assets only with ``extra``.
    FileNotFoundError for an asset the mirror lacks."""
    from urllib.parse import urlsplit
    from weasel.util import load_project_config

    out_dir = Path(out_dir)
    laid: Dict[str, List[str]] = {"files": [], "repos": []}
    for asset in load_project_config(Path(project_dir)).get("assets", []):
        if asset.get("extra") and not extra:
            continue
        source = _mirrored(mirror, asset["dest"])
        if source is None:
            raise FileNotFoundError(f"The mirror {mirror} has no copy of {asset['dest']}")
        if "git" in asset:
            parts = urlsplit(asset["git"]["repo"])
            _bare_repo(source, out_dir / parts.netloc / parts.path.strip("/"),
                       asset["git"].get("branch") or "master", asset["git"].get("path", ""))
            laid["repos"].append(asset["dest"])
        elif asset.get("url"):
            parts = urlsplit(asset["url"])
            target = out_dir / parts.netloc / parts.path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            laid["files"].append(asset["dest"])
    return laid


def _bare_repo(tree: Path, target: Path, branch: str, subpath: str) -> None:
    git = ["git", "-c", "user.name=mirror", "-c", "user.email=mirror@localhost", "-c", "init.defaultBranch=" + branch]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        _copy_tree(tree, work / subpath if subpath else work)
        for args in (["init", "--quiet"], ["add", "-A"], ["commit", "--quiet", "-m", f"copy of {tree}"]):
            subprocess.run(git + ["-C", str(work)] + args, check=True, capture_output=True)
        if target.exists():
            shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(git + ["clone", "--quiet", "--bare", str(work), str(target)], check=True, capture_output=True)
        # One pack, so a clone over plain HTTP fetches one file, not one per object.
        for args in (["repack", "-a", "-d", "-q"], ["update-server-info"]):
            subprocess.run(git + ["-C", str(target)] + args, check=True, capture_output=True)
