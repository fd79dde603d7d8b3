"""Label-wise attention for spaCy's ``textcat_multilabel``: each label reads its own evidence."""

from .model import LabelAttention, build_label_attention_textcat

__all__ = ["LabelAttention", "build_label_attention_textcat"]
