"""Rule-based abbreviation detection (Schwartz & Hearst, 2003): the ``biolm_abbreviations``
pipeline component."""

from .component import Abbreviation, AbbreviationDetector, make_abbreviation_detector

__all__ = ["Abbreviation", "AbbreviationDetector", "make_abbreviation_detector"]
