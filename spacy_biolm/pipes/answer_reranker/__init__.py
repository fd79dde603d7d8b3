"""The ``answer_reranker`` component: ranks candidate answer sentences for a question."""

from .component import AnswerReranker, make_answer_reranker

__all__ = ["AnswerReranker", "make_answer_reranker"]
