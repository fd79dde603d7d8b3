"""The encoder shared by the pair tasks: an HF encoder + tokenizer fed (question, passage) pairs.

Import-light: the heavy libraries are imported when an encoder is built.
"""

from .heads import PairClassifier, SpanExtractor, SpanLogits
from .pair_encoder import EncodedWindows, PairEncoder, QAPair, get_tokenizer, tokenize_pairs

__all__ = [
    "EncodedWindows",
    "PairClassifier",
    "PairEncoder",
    "QAPair",
    "SpanExtractor",
    "SpanLogits",
    "get_tokenizer",
    "tokenize_pairs",
]
