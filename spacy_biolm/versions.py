"""Which spacy-biolm a pipeline was built with, and the check that the installed one matches.

A packaged pipeline (``spacy-biolm release package``) records the exact version in its meta.json:
``"requirements": ["spacy-biolm==0.1.0", ...]``. pip enforces it when both wheels are installed
together, but not when spacy-biolm is upgraded later, installed from a checkout (``pip install -e``)
or installed with ``--no-deps``; then the pipeline's weights and configs meet code they were not
saved by. :func:`check_built_version` turns that into one clear error naming both versions.

It is the first statement of every spacy-biolm factory (the five ``pipes/*/component.py``), so it
runs whenever a pipeline holding any of our components is created (``spacy.load`` included),
before any weights are read, and the version is compared in this one function. Pipelines without our
components never run it; a pipeline whose meta records no spacy-biolm requirement (a training
directory) passes.

Import-light (no spaCy, no torch): imported by every factory entry point.
"""

import re
from typing import Iterable, Optional

from . import __version__

__all__ = ["DISTRIBUTION", "SpacyBiolmVersionError", "pinned_requirement", "pin_requirement",
           "recorded_requirement", "check_built_version"]

#: The distribution name, as it appears in ``requirements``.
DISTRIBUTION = "spacy-biolm"

# PEP 503 name normalisation (spacy_biolm, Spacy.BioLM, spacy-biolm are one name) + the specifier.
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$")


class SpacyBiolmVersionError(RuntimeError):
    """The pipeline was built with another spacy-biolm version than the one installed."""


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned_requirement(version: str = __version__) -> str:
    """The requirement a release records: exactly this version, ``spacy-biolm==0.1.0``."""
    return f"{DISTRIBUTION}=={version}"


def pin_requirement(meta: dict, version: str = __version__) -> dict:
    """A copy of a pipeline ``meta`` whose ``requirements`` name exactly ``version`` of spacy-biolm
    (any other spacy-biolm requirement replaced, the other requirements kept in order)."""
    others = [req for req in meta.get("requirements", []) if _split(req)[0] != DISTRIBUTION]
    return {**meta, "requirements": [pinned_requirement(version)] + others}


def _split(requirement: str):
    match = _REQUIREMENT.match(requirement)
    if not match:
        return None, None
    return _normalise(match.group(1)), match.group(2).strip()


def recorded_requirement(requirements: Iterable[str]) -> Optional[str]:
    """The version specifier of spacy-biolm in ``requirements`` (``"==0.1.0"``, ``">=0.1.0,<0.2.0"``),
    or None when they do not name spacy-biolm."""
    for requirement in requirements or ():
        name, specifier = _split(str(requirement))
        if name == DISTRIBUTION:
            return specifier
    return None


def check_built_version(meta: dict, installed: str = __version__) -> None:
    """Raise :class:`SpacyBiolmVersionError` when ``meta["requirements"]`` records a spacy-biolm
    version (or range) that ``installed`` does not satisfy; the message names both versions."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    specifier = recorded_requirement(meta.get("requirements", []))
    if not specifier:  # not recorded (a training directory) or unversioned: nothing to compare
        return
    pipeline = f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')} {meta.get('version', '')}".strip()
    try:
        allowed = SpecifierSet(specifier)
    except InvalidSpecifier:
        raise SpacyBiolmVersionError(
            f"The pipeline {pipeline} records an unreadable spacy-biolm requirement {specifier!r} in its "
            f"meta.json 'requirements'"
        ) from None
    if not allowed.contains(installed, prereleases=True):
        raise SpacyBiolmVersionError(
            f"The pipeline {pipeline} was built with spacy-biolm{specifier} (its meta.json 'requirements'), "
            f"but spacy-biolm {installed} is installed. Install the version it was built with "
            f"(pip install \"spacy-biolm{specifier}\", e.g. the spacy_biolm wheel built beside the pipeline), "
            f"or rebuild the pipeline with spacy-biolm {installed}."
        )
