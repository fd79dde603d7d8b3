"""The encoder shared by the pair tasks and the anonymised relations: an HF encoder + tokenizer fed
(question, passage) pairs or single (marked) texts.

Import-light: the heavy libraries are imported when an encoder is built.
"""

from .heads import PairClassifier, SpanExtractor, SpanLogits
from .pair_encoder import EncodedWindows, EncoderInput, PairEncoder, QAPair, get_tokenizer, tokenize_windows

__all__ = [
    "EncodedWindows",
    "EncoderInput",
    "PairClassifier",
    "PairEncoder",
    "QAPair",
    "SpanExtractor",
    "SpanLogits",
    "get_tokenizer",
    "tokenize_windows",
]
