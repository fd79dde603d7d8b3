"""The ``yes_no`` component: yes/no answers to a question about a passage (BioASQ yes/no)."""

from .component import YesNoClassifier, make_yes_no

__all__ = ["YesNoClassifier", "make_yes_no"]
