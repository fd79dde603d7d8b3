"""Fetch a project's assets, taking each from a local mirror of the corpora when it is there.

project.yml names every asset with its upstream URL and MD5 checksum, and lays assets out under
``assets/`` exactly as the mirror lays them out (``assets/ner/NCBI-disease/...`` is
``<mirror>/ner/NCBI-disease/...``). A mirrored file is copied only if its checksum matches, so a
mirror can never substitute different data; whatever the mirror lacks is downloaded as
``spacy project assets`` would.
"""

import shutil
from pathlib import Path
from typing import Dict, List, Optional

from wasabi import msg

__all__ = ["fetch_assets", "ASSETS_DIR"]

ASSETS_DIR = "assets"


def _md5(path: Path) -> str:
    from weasel.util import get_checksum

    return get_checksum(path)


def fetch_assets(project_dir: Path, mirror: Optional[Path] = None, extra: bool = False) -> Dict[str, List[str]]:
    """Make every asset of ``project_dir/project.yml`` present; returns what came from where.
    Assets marked ``extra: true`` (needed by optional workflows only) are fetched only with
    ``extra``, as ``spacy project assets --extra`` does."""
    from weasel.cli.assets import fetch_asset
    from weasel.util import load_project_config

    project_dir = Path(project_dir)
    config = load_project_config(project_dir)
    report: Dict[str, List[str]] = {"present": [], "mirror": [], "downloaded": []}
    for asset in config.get("assets", []):
        if asset.get("extra") and not extra:
            continue
        dest = project_dir / asset["dest"]
        checksum = asset.get("checksum")
        if dest.is_file() and (checksum is None or _md5(dest) == checksum):
            report["present"].append(asset["dest"])
            continue
        source = _mirrored(mirror, asset["dest"])
        if source is not None and (checksum is None or _md5(source) == checksum):
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
            report["mirror"].append(asset["dest"])
            continue
        if source is not None:
            msg.warn(f"Mirror copy of {asset['dest']} has another checksum; downloading instead")
        if not asset.get("url"):
            raise FileNotFoundError(f"Asset {asset['dest']} is not in the mirror and has no URL")
        fetch_asset(project_dir, asset["url"], Path(asset["dest"]), checksum)
        if not dest.is_file():
            raise FileNotFoundError(f"Could not fetch asset {asset['dest']} from {asset['url']}")
        report["downloaded"].append(asset["dest"])
    return report


def _mirrored(mirror: Optional[Path], dest: str) -> Optional[Path]:
    if mirror is None:
        return None
    parts = Path(dest).parts
    if not parts or parts[0] != ASSETS_DIR:
        return None
    candidate = Path(mirror).joinpath(*parts[1:])
    return candidate if candidate.is_file() else None
