"""The release's two wheels: the pipeline (``spacy package``) and the spacy-biolm library it needs.

No package index serves spacy-biolm, so the pipeline wheel alone does not install: both are built
side by side, the pipeline's meta requiring exactly the spacy-biolm version built with it
(:func:`spacy_biolm.versions.pin_requirement`). Install them together:
``pip install dist/spacy_biolm-*.whl packages/en_NAME-VERSION/dist/*.whl``.
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Optional, Tuple

from . import __version__
from .versions import pin_requirement

__all__ = ["SOURCE_DIR", "build_library_wheel", "build_pipeline_wheel", "build_release_wheels", "record_wheel_size"]

#: The checkout spacy-biolm is imported from (its pyproject.toml builds the library wheel).
SOURCE_DIR = Path(__file__).resolve().parents[1]
# What the wheel is built from, besides the spacy_biolm package (pyproject.toml names README.md).
_PACKAGE_SOURCES = ("pyproject.toml", "README.md")


def build_library_wheel(dist_dir: Path, source_dir: Path = SOURCE_DIR) -> Path:
    """Build the spacy-biolm wheel of ``source_dir`` into ``dist_dir``, replacing older
    spacy-biolm wheels there (so ``pip install dist/*.whl`` finds one). Returns its path.

    Built with the running interpreter's setuptools (``pip wheel --no-build-isolation``): no
    package index is needed, and the wheel holds the code of this checkout. The build runs on a
    clean copy of the package sources: an in-tree ``build/`` keeps modules deleted since the last
    build, and they would end up in the wheel.
    """
    source_dir, dist_dir = Path(source_dir), Path(dist_dir)
    if not (source_dir / "pyproject.toml").exists():
        raise FileNotFoundError(
            f"{source_dir / 'pyproject.toml'} not found: the spacy-biolm wheel is built from a checkout "
            f"of the repository (spacy_biolm is imported from {Path(__file__).parent})"
        )
    dist_dir.mkdir(parents=True, exist_ok=True)
    for old in dist_dir.glob("spacy_biolm-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        clean = Path(tmp) / "spacy-biolm"
        clean.mkdir()
        for name in _PACKAGE_SOURCES:
            shutil.copy2(source_dir / name, clean / name)
        shutil.copytree(source_dir / "spacy_biolm", clean / "spacy_biolm",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                   str(clean), "--wheel-dir", str(dist_dir.resolve())]
        result = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
    if result.returncode != 0:
        raise RuntimeError(f"building the spacy-biolm wheel failed ({' '.join(command)}):\n{result.stderr}")
    wheel = dist_dir / f"spacy_biolm-{__version__}-py3-none-any.whl"
    if not wheel.exists():
        raise RuntimeError(f"pip wheel did not write {wheel}; {dist_dir} holds {sorted(p.name for p in dist_dir.iterdir())}")
    return wheel


def build_pipeline_wheel(pipeline_dir: Path, packages_dir: Path, name: str, version: str,
                         meta_path: Optional[Path] = None) -> Path:
    """``spacy package`` ``pipeline_dir`` as the wheel ``en_NAME-VERSION`` under ``packages_dir``,
    its meta (``meta_path``, else the pipeline's own meta.json) requiring exactly this spacy-biolm.
    Returns the wheel's path."""
    from spacy.cli.package import package

    pipeline_dir = Path(pipeline_dir)
    source = Path(meta_path) if meta_path else pipeline_dir / "meta.json"
    if not source.exists():
        raise FileNotFoundError(f"{source}: no meta.json for the package")
    meta = pin_requirement(json.loads(source.read_text(encoding="utf8")))
    Path(packages_dir).mkdir(parents=True, exist_ok=True)
    package_name = f"{meta.get('lang', 'en')}_{name}-{version}"
    # spacy package keeps the README.md an earlier build left in the package folder: the wheel would
    # carry that build's scores. Removed, spacy package writes it anew from this meta.
    (Path(packages_dir) / package_name / "README.md").unlink(missing_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        pinned = Path(tmp) / "meta.json"
        pinned.write_text(json.dumps(meta, indent=2), encoding="utf8")
        package(pipeline_dir, Path(packages_dir), meta_path=pinned, name=name, version=version,
                create_sdist=False, create_wheel=True, force=True, silent=True)
    wheel = Path(packages_dir) / package_name / "dist" / f"{package_name}-py3-none-any.whl"
    if not wheel.exists():
        raise RuntimeError(f"spacy package did not write {wheel}")
    return wheel


def record_wheel_size(results: Path, wheel: Path) -> Dict[str, object]:
    """Add ``wheel`` (its file name and size in bytes) to the results JSON ``results`` (which the
    release's evaluation wrote: it must exist); returns the record."""
    from .run_record import add_fields

    wheel = Path(wheel)
    return add_fields(results, wheel={"file": wheel.name, "bytes": wheel.stat().st_size})["wheel"]


def build_release_wheels(pipeline_dir: Path, packages_dir: Path, dist_dir: Path, name: str, version: str,
                         meta_path: Optional[Path] = None) -> Tuple[Path, Path]:
    """Both wheels of a release: (pipeline wheel, spacy-biolm wheel)."""
    return (build_pipeline_wheel(pipeline_dir, packages_dir, name, version, meta_path),
            build_library_wheel(dist_dir))
