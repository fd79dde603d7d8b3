"""spaCy components for biomedical text mining with small pretrained encoders.

Kept import-light: spaCy imports our entry points on every ``spacy.blank``/``spacy.load``,
so nothing here imports torch or transformers.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]

from .doc_data import make_question_doc  # noqa: E402  (spaCy only: keeps the package light)

__all__ += ["make_question_doc"]
