"""Sentence boundaries for biomedical text: the ``biomedical_sentencizer`` pipeline component."""

from .component import BiomedicalSentencizer, continues_sentence, make_biomedical_sentencizer, replace_sentencizers

__all__ = ["BiomedicalSentencizer", "continues_sentence", "make_biomedical_sentencizer", "replace_sentencizers"]
