"""``yes_no``: answers a yes/no question about a passage, in ``doc.cats`` {"yes": p, "no": 1 - p}.

The Doc is the passage, the question is ``doc._.question`` (see ``make_question_doc``). The
encoder reads ``[CLS] question [SEP] passage [SEP]`` (long passages in overlapping windows) and a
linear layer on ``[CLS]`` gives the answer. BioASQ's yes/no questions are ~80% "yes": the
``class_weights`` setting ("balanced" or ``{"no": 4.0}``) weighs the loss against that imbalance.
"""

from typing import Any, Callable, Iterable, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model

from ..base import ClassifierPipe
from ..qa_pipe import passage_pairs, qa_factory_config
from ...versions import check_built_version

__all__ = ["YesNoClassifier", "make_yes_no"]

LABELS = ("no", "yes")  # index order of the model's logits


@Language.factory(
    "yes_no",
    assigns=["doc.cats"],
    requires=["doc._.question"],
    default_config=qa_factory_config(
        "spacy-biolm.YesNoClassifier.v1", "spacy-biolm.yes_no_scorer.v1", window=256, stride=64, class_weights=None
    ),
    default_score_weights={"yes_no_macro_f": 1.0, "yes_no_acc": 0.0, "yes_no_f_yes": 0.0, "yes_no_f_no": 0.0},
)
def make_yes_no(nlp: Language, name: str, model: Model, class_weights: Optional[Any], scorer: Optional[Callable]):
    """Create a ``yes_no`` component.

    model: a ``spacy-biolm.YesNoClassifier.v1`` (pair encoder + linear layer).
    class_weights: null (unweighted loss), "balanced" (weights from the training label counts)
        or ``{"yes": w, "no": w}``.
    scorer: ``spacy-biolm.yes_no_scorer.v1`` (P/R/F1 per class).
    """
    check_built_version(nlp.meta)  # the pipeline's recorded spacy-biolm version vs this one
    return YesNoClassifier(nlp.vocab, model, name, class_weights=class_weights, scorer=scorer)


def gold_label(example: Example) -> int:
    """Index into LABELS of the example's gold answer; a clear error when it has none."""
    cats = example.reference.cats
    if "yes" not in cats:
        raise ValueError(f"yes_no: gold Doc of question {example.reference._.question_id!r} has no 'yes' category: {cats}")
    return 1 if cats["yes"] >= 0.5 else 0


class YesNoClassifier(ClassifierPipe):
    """Yes/no answers for (question, passage) Docs."""

    @property
    def classes(self) -> Tuple[str, ...]:
        return LABELS

    def model_input(self, docs: Sequence[Doc]):
        return passage_pairs(docs, self.name)

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        _, probs = predictions
        for doc, (p_no, p_yes) in zip(docs, probs):
            doc.cats = {"yes": float(p_yes), "no": float(p_no)}

    def gold_targets(self, examples, owners) -> numpy.ndarray:
        return numpy.asarray([gold_label(examples[i]) for i in owners], dtype="int64")
