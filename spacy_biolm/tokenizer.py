"""A tokenizer that matches how the biomedical NER corpora are tokenised.

BioBERT's and the MTL NER corpora (NCBI-disease, BC2GM, JNLPBA, ...) split on whitespace and make
every punctuation character its own token ("IL - 2", "BRCA1 - associated", "( APC )"); BERT-style
WordPiece tokenizers split the same way. spaCy's English tokenizer keeps "IL-2" or "5'-UTR"
together, so a model trained on the corpora would see unfamiliar tokens at run time, and an
entity boundary inside such a token could never be predicted.

The corpora are ASCII: their sources' Unicode was transliterated before tokenising. What became
ASCII punctuation or symbols is split ("+/-" from "±", "(R)" from "®", ">=" from "≥", "-" from the
minus sign "−"), so Unicode symbols are split here too ("p53−/−" -> "p53 − / −",
"Na⁺/K⁺-ATPase" -> "Na ⁺ / K ⁺ - ATPase"). Greek letters became letters ("PPARalpha", "IL - 1beta")
and stay inside their word here ("PPARα", "IL - 1β"), as any other letter does.
"""

import re
import sys
import unicodedata
from functools import lru_cache
from typing import List

from spacy.tokenizer import Tokenizer
from spacy.util import registry

__all__ = ["create_bio_tokenizer", "is_split_character", "split_character_class"]


def is_split_character(ch: str) -> bool:
    """Whether ``ch`` is always a token of its own: ASCII non-alphanumeric printable characters
    (BERT's basic tokenizer's punctuation, and what the corpora split) plus every Unicode
    punctuation (category P*) or symbol (category S*) character."""
    code = ord(ch)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(ch)[0] in ("P", "S")


@lru_cache(maxsize=1)
def split_character_class() -> str:
    """A regex character class matching exactly the characters of ``is_split_character``, written
    as code point ranges: the pattern is stored in every saved pipeline's tokenizer, so it is kept
    short (a few kB instead of one escape per character)."""
    ranges: List[List[int]] = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue  # surrogates are not characters
        if is_split_character(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    parts = []
    for start, end in ranges:
        first, last = re.escape(chr(start)), re.escape(chr(end))
        parts.append(first if start == end else f"{first}-{last}")
    return "[" + "".join(parts) + "]"


@registry.tokenizers("spacy-biolm.BioTokenizer.v1")
def create_bio_tokenizer():
    """Tokenizer factory (``[nlp.tokenizer] @tokenizers = "spacy-biolm.BioTokenizer.v1"``):
    split on whitespace and around every punctuation or symbol character, as the biomedical
    corpora do; letters (Greek ones included) and digits stay together."""
    split = re.compile(split_character_class())

    def make_tokenizer(nlp):
        return Tokenizer(
            nlp.vocab,
            rules={},
            prefix_search=re.compile("^" + split.pattern).search,
            suffix_search=re.compile(split.pattern + "$").search,
            infix_finditer=split.finditer,
        )

    return make_tokenizer
