"""A tokenizer that matches how the biomedical NER corpora are tokenised.

BioBERT's and the MTL NER corpora (NCBI-disease, BC2GM, JNLPBA, ...) split on whitespace and make
every punctuation character its own token ("IL - 2", "BRCA1 - associated", "( APC )"); BERT-style
WordPiece tokenizers split the same way. spaCy's English tokenizer keeps "IL-2" or "5'-UTR"
together, so a model trained on the corpora would see unfamiliar tokens at run time, and an
entity boundary inside such a token could never be predicted.
"""

import re
import sys
import unicodedata
from functools import lru_cache

from spacy.tokenizer import Tokenizer
from spacy.util import registry

__all__ = ["create_bio_tokenizer", "punctuation_class"]


@lru_cache(maxsize=1)
def punctuation_class() -> str:
    """A regex character class of punctuation as BERT's basic tokenizer defines it: ASCII
    non-alphanumeric printable characters plus every Unicode character of category P*."""
    chars = []
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue  # surrogates
        ch = chr(code)
        ascii_punct = 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126
        if ascii_punct or unicodedata.category(ch).startswith("P"):
            chars.append(re.escape(ch))
    return "[" + "".join(chars) + "]"


@registry.tokenizers("spacy-biolm.BioTokenizer.v1")
def create_bio_tokenizer():
    """Tokenizer factory (``[nlp.tokenizer] @tokenizers = "spacy-biolm.BioTokenizer.v1"``):
    split on whitespace and around every punctuation character, as the biomedical corpora do."""
    punct = re.compile(punctuation_class())

    def make_tokenizer(nlp):
        return Tokenizer(
            nlp.vocab,
            rules={},
            prefix_search=re.compile("^" + punct.pattern).search,
            suffix_search=re.compile(punct.pattern + "$").search,
            infix_finditer=punct.finditer,
        )

    return make_tokenizer
