"""``entity_errors``: exact-match counts and the most frequent wrong texts of one entity type."""

import spacy
from spacy.tokens import Span
from spacy.training import Example

from spacy_biolm.doc_data import ENTITIES_SPANS_KEY
from spacy_biolm.evaluation.entities import entity_errors

NLP = spacy.blank("en")
TEXT = "OG1RF lacks gelE but OG1RF expresses fsrB ."


def _example(gold, found, missing=()):
    reference = NLP.make_doc(TEXT)
    reference.set_ents([Span(reference, s, e, label=label) for s, e, label in gold],
                       missing=[reference[i:i + 1] for i in missing], default="outside")
    predicted = NLP.make_doc(TEXT)
    predicted.spans[ENTITIES_SPANS_KEY] = [Span(predicted, s, e, label=label) for s, e, label in found]
    return Example(predicted, reference)


def test_counts_and_the_most_frequent_errors_of_one_type():
    gold = [(0, 1, "SPECIES"), (2, 3, "GENE"), (4, 5, "SPECIES"), (6, 7, "GENE")]
    # The strain taken for a gene twice, gelE found, fsrB missed; a SPECIES prediction is not GENE's business.
    found = [(0, 1, "GENE"), (2, 3, "GENE"), (4, 5, "GENE"), (4, 5, "SPECIES")]
    errors = entity_errors([_example(gold, found)] * 2, "GENE", top=1)
    assert (errors["true_positives"], errors["false_positives"], errors["false_negatives"]) == (2, 4, 2)
    assert errors["p"] == 2 / 6 and errors["r"] == 0.5 and abs(errors["f"] - 0.4) < 1e-9
    assert errors["top_false_positives"] == [("OG1RF", 4)] and errors["top_false_negatives"] == [("fsrB", 2)]


def test_a_prediction_over_missing_gold_tags_is_not_an_error():
    errors = entity_errors([_example([(2, 3, "GENE")], [(0, 1, "GENE"), (2, 3, "GENE")], missing=[0])], "GENE")
    assert (errors["true_positives"], errors["false_positives"], errors["false_negatives"]) == (1, 0, 0)
    assert errors["p"] == errors["r"] == errors["f"] == 1.0
    assert entity_errors([], "GENE")["f"] == 0.0
