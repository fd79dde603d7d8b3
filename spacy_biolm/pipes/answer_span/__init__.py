"""The ``answer_span`` component: extractive (factoid) question answering with n-best answers."""

from .component import AnswerSpanExtractor, make_answer_span

__all__ = ["AnswerSpanExtractor", "make_answer_span"]
