"""relation_extractor: pairs, anonymisation, scorer, training, serialisation, bad input."""

import warnings

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

from spacy_biolm.doc_data import Relation, get_relations, set_relations
from spacy_biolm.pipes.relation_extractor.data import PairLimitExceeded, anonymise, candidate_pairs
from spacy_biolm.testing import device_params, record_input_devices

DEVICES = device_params()
from spacy_biolm.pipes.relation_extractor.scorer import score_relations

GAD_PLACEHOLDERS = {"GENE": "@GENE$", "DISEASE": "@DISEASE$"}


def make_doc(words, ents, relations=()):
    """``ents``: (start, end, label) token spans; ``relations``: (head index, tail index, label)."""
    doc = Doc(spacy.blank("en").vocab, words=words)
    doc.ents = [Span(doc, s, e, label=label) for s, e, label in ents]
    spans = list(doc.ents)
    set_relations(doc, [Relation(spans[h], spans[t], label) for h, t, label in relations])
    return doc


# -- pairs ------------------------------------------------------------------------------------


def test_candidate_pairs_follow_the_configured_types_head_first():
    doc = make_doc(["TP53", "and", "BRCA1", "cause", "cancer", "and", "aspirin"],
                   [(0, 1, "GENE"), (2, 3, "GENE"), (4, 5, "DISEASE"), (6, 7, "CHEMICAL")])
    pairs, skipped = candidate_pairs(doc.ents, [["GENE", "DISEASE"]])
    assert [(h.text, t.text) for h, t in pairs] == [("TP53", "cancer"), ("BRCA1", "cancer")]
    assert skipped == 0
    # The head is the entity of the first type even when it comes later in the text.
    pairs, _ = candidate_pairs(doc.ents, [["DISEASE", "GENE"]])
    assert [(h.text, t.text) for h, t in pairs] == [("cancer", "TP53"), ("cancer", "BRCA1")]
    # Same-type pairs appear once, earlier entity first; no types = every unordered pair.
    pairs, _ = candidate_pairs(doc.ents, [["GENE", "GENE"]])
    assert [(h.text, t.text) for h, t in pairs] == [("TP53", "BRCA1")]
    assert len(candidate_pairs(doc.ents)[0]) == 6


def test_pair_count_is_bounded_closest_pairs_kept():
    words = [f"G{i}" for i in range(30)] + [f"D{i}" for i in range(30)]
    ents = [(i, i + 1, "GENE") for i in range(30)] + [(30 + i, 31 + i, "DISEASE") for i in range(30)]
    doc = make_doc(words, ents)
    pairs, skipped = candidate_pairs(doc.ents, [["GENE", "DISEASE"]], max_pairs=50)
    assert len(pairs) == 50 and skipped == 900 - 50
    everything, _ = candidate_pairs(doc.ents, [["GENE", "DISEASE"]])
    kept = {(h.start, t.start) for h, t in pairs}
    left_out = [abs(h.start - t.start) for h, t in everything if (h.start, t.start) not in kept]
    assert max(abs(h.start - t.start) for h, t in pairs) <= min(left_out)  # the closest pairs are kept
    nlp = spacy.blank("en")
    nlp.add_pipe("relation_extractor", config={"pair_types": [["GENE", "DISEASE"]], "max_pairs_per_doc": 50})
    with pytest.warns(PairLimitExceeded, match="skipped 850"):
        assert len(nlp.get_pipe("relation_extractor").candidate_pairs(doc)) == 50


# -- relations on the Doc -------------------------------------------------------------------------


def test_relations_survive_docbin_round_trip_and_reject_overlaps():
    doc = make_doc(["BRCA1", "causes", "breast", "cancer"], [(0, 1, "GENE"), (2, 4, "DISEASE")], [(0, 1, "ASSOCIATION")])
    assert doc._.relations == [Relation(doc[0:1], doc[2:4], "ASSOCIATION", 1.0)]
    docbin = DocBin(docs=[doc], store_user_data=True)
    back = list(DocBin(store_user_data=True).from_bytes(docbin.to_bytes()).get_docs(spacy.blank("en").vocab))[0]
    rel = back._.relations[0]
    assert (rel.head.text, rel.tail.text, rel.label, rel.score) == ("BRCA1", "breast cancer", "ASSOCIATION", 1.0)
    with pytest.raises(ValueError, match="overlapping entity spans"):
        doc._.relations = [Relation(doc[2:4], doc[3:4], "ASSOCIATION")]


def test_anonymisation_replaces_the_pair_and_other_entities():
    doc = make_doc(["aspirin", "inhibits", "COX1", "and", "COX2", "."],
                   [(0, 1, "CHEMICAL"), (2, 3, "GENE"), (4, 5, "GENE")])
    ents = list(doc.ents)
    placeholders = {"CHEMICAL": "BC6ENTC", "GENE": "BC6ENTG"}
    assert anonymise(doc, ents[0], ents[2], placeholders, "BC6OTHER") == "BC6ENTC inhibits BC6OTHER and BC6ENTG ."
    assert anonymise(doc, ents[0], ents[1], placeholders) == "BC6ENTC inhibits BC6ENTG and COX2 ."
    assert anonymise(doc, ents[0], ents[1], placeholders, style="mark") == "<< aspirin >> inhibits [[ COX1 ]] and COX2 ."
    assert anonymise(doc, ents[0], ents[1], placeholders, window=(0, 3)) == "BC6ENTC inhibits BC6ENTG"
    assert anonymise(doc, ents[0], ents[1], {}) == "@CHEMICAL$ inhibits @GENE$ and COX2 ."


# -- scorer ----------------------------------------------------------------------------------------


def test_scorer_micro_prf_over_positive_labels_on_hand_computed_case():
    words = ["C1", "G1", "C2", "G2"]
    ents = [(0, 1, "CHEMICAL"), (1, 2, "GENE"), (2, 3, "CHEMICAL"), (3, 4, "GENE")]
    gold = make_doc(words, ents, [(0, 1, "CPR:3"), (2, 3, "CPR:4"), (0, 3, "CPR:9")])
    # right CPR:3, wrong label for (2,3) (fp CPR:5 + fn CPR:4), missed (0,3), spurious (2,1) CPR:3.
    pred = make_doc(words, ents, [(0, 1, "CPR:3"), (2, 3, "CPR:5"), (2, 1, "CPR:3")])
    scores = score_relations([Example(pred, gold)])
    # tp=1, fp=2, fn=2 -> P=1/3, R=1/3, F=1/3
    assert scores["rel_micro_p"] == pytest.approx(1 / 3)
    assert scores["rel_micro_r"] == pytest.approx(1 / 3)
    assert scores["rel_micro_f"] == pytest.approx(1 / 3)
    assert scores["rel_f_per_type"]["CPR:3"] == pytest.approx({"p": 0.5, "r": 1.0, "f": 2 / 3})
    assert scores["rel_counts"]["CPR:4"] == {"fn": 1}
    # Binary (GAD): tp=1, fp=1, fn=0 over two docs; a correctly rejected pair counts nothing.
    g1 = make_doc(["G", "D"], [(0, 1, "GENE"), (1, 2, "DISEASE")], [(0, 1, "ASSOCIATION")])
    p1 = make_doc(["G", "D"], [(0, 1, "GENE"), (1, 2, "DISEASE")], [(0, 1, "ASSOCIATION")])
    g2 = make_doc(["G", "D"], [(0, 1, "GENE"), (1, 2, "DISEASE")])
    p2 = make_doc(["G", "D"], [(0, 1, "GENE"), (1, 2, "DISEASE")], [(0, 1, "ASSOCIATION")])
    g3 = make_doc(["G", "D"], [(0, 1, "GENE"), (1, 2, "DISEASE")])
    binary = score_relations([Example(p1, g1), Example(p2, g2), Example(g3.copy(), g3)])
    assert (binary["rel_micro_p"], binary["rel_micro_r"]) == (0.5, 1.0)
    assert binary["rel_micro_f"] == pytest.approx(2 / 3)


# -- the component ---------------------------------------------------------------------------------


def gad_examples(n=24):
    """Sentences whose label is given by the verb: 'causes' related, 'ignores' not."""
    examples = []
    for i in range(n):
        related = i % 2 == 0
        words = ["Mutations", "in", "@GENE$", "causes" if related else "ignores", "@DISEASE$", "."]
        reference = make_doc(words, [(2, 3, "GENE"), (4, 5, "DISEASE")], [(0, 1, "ASSOCIATION")] if related else [])
        predicted = make_doc(words, [(2, 3, "GENE"), (4, 5, "DISEASE")])
        examples.append(Example(predicted, reference))
    return examples


def anonymised_model(encoder, window=32):
    return {
        "@architectures": "spacy-biolm.RelationAnonymised.v1",
        "placeholders": {},  # BioBERT's @LABEL$ for every label
        "encoder": {"@architectures": "spacy-biolm.PairEncoder.v1", "name": str(encoder), "window": window, "stride": 8},
    }


def anonymised_nlp(encoder, **settings):
    nlp = spacy.blank("en")
    nlp.add_pipe("relation_extractor", config={
        "labels": ["ASSOCIATION"], "pair_types": [["GENE", "DISEASE"]], "model": anonymised_model(encoder), **settings,
    })
    return nlp


def fast_nlp(encoder):
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config={"model": {"name": str(encoder), "@architectures": "spacy-transformers.TransformerModel.v3",
                                                  "get_spans": {"@span_getters": "spacy-transformers.strided_spans.v1", "window": 64, "stride": 48}}})
    nlp.add_pipe("relation_extractor", config={"labels": ["ASSOCIATION"], "pair_types": [["GENE", "DISEASE"]]})
    return nlp


@pytest.mark.parametrize("build", [anonymised_nlp, fast_nlp], ids=["anonymised", "fast"])
def test_component_trains_predicts_and_round_trips(build, relation_encoder, tmp_path):
    nlp = build(relation_encoder)
    examples = gad_examples()
    optimizer = nlp.initialize(lambda: examples)
    losses = []
    for _ in range(40):
        step = {}
        nlp.update(examples, sgd=optimizer, losses=step)
        losses.append(step["relation_extractor"])
    assert losses[-1] < 0.5 * losses[0], losses
    scores = nlp.evaluate(examples)
    assert scores["rel_micro_f"] == 1.0
    docs = [eg.predicted.copy() for eg in examples[:4]]
    predicted = list(nlp.pipe(docs))
    assert [len(d._.relations) for d in predicted] == [1, 0, 1, 0]
    rel = predicted[0]._.relations[0]
    assert (rel.head.text, rel.tail.text, rel.label) == ("@GENE$", "@DISEASE$", "ASSOCIATION") and 0.5 < rel.score <= 1
    nlp.to_disk(tmp_path / "pipeline")
    # The saved pipeline carries its encoder: loading does not need the encoder directory.
    for path in relation_encoder.iterdir():
        path.rename(path.with_name(path.name + ".moved"))
    try:
        loaded = spacy.load(tmp_path / "pipeline")
        again = list(loaded.pipe([eg.predicted.copy() for eg in examples[:4]]))
    finally:
        for path in relation_encoder.iterdir():
            path.rename(path.with_name(path.name[: -len(".moved")]))
    assert [[(r.label, round(r.score, 5)) for r in d._.relations] for d in again] == \
        [[(r.label, round(r.score, 5)) for r in d._.relations] for d in predicted]


def test_gold_label_outside_the_config_is_an_error(relation_encoder):
    nlp = anonymised_nlp(relation_encoder)
    examples = gad_examples(4)
    bad = make_doc(["@GENE$", "x", "@DISEASE$"], [(0, 1, "GENE"), (2, 3, "DISEASE")], [(0, 1, "CAUSES")])
    with pytest.raises(ValueError, match="'CAUSES' is not one of the configured labels"):
        nlp.initialize(lambda: examples + [Example(bad.copy(), bad)])


def test_labels_come_from_the_data_when_not_configured(relation_encoder):
    nlp = spacy.blank("en")
    nlp.add_pipe("relation_extractor", config={"model": anonymised_model(relation_encoder)})
    nlp.initialize(lambda: gad_examples(4))
    assert nlp.get_pipe("relation_extractor").labels == ("ASSOCIATION",)


def test_long_inputs_are_windowed_around_the_pair(relation_encoder):
    from spacy_biolm.encoders import get_tokenizer
    from spacy_biolm.pipes.relation_extractor.model import pair_texts

    nlp = anonymised_nlp(relation_encoder)
    nlp.initialize(lambda: gad_examples(2))
    model = nlp.get_pipe("relation_extractor").model
    words = ["filler"] * 80 + ["@GENE$", "causes", "@DISEASE$"] + ["filler"] * 80
    doc = make_doc(words, [(80, 81, "GENE"), (82, 83, "DISEASE")])
    tokenizer = get_tokenizer(model.get_ref("encoder"))
    (text,) = pair_texts(model, [doc], [numpy.asarray([[80, 81, 82, 83]])])
    assert "@GENE$ causes @DISEASE$" in text
    assert len(tokenizer(text)["input_ids"]) <= 32
    # A pair longer than the window is not truncated: the encoder reads it in overlapping windows.
    words = ["@GENE$"] + ["filler"] * 60 + ["@DISEASE$"]
    doc = make_doc(words, [(0, 1, "GENE"), (61, 62, "DISEASE")])
    (text,) = pair_texts(model, [doc], [numpy.asarray([[0, 1, 61, 62]])])
    assert text == " ".join(words)
    probs = nlp.get_pipe("relation_extractor").predict([doc])[1]
    assert probs.shape == (1, 2) and probs.sum() == pytest.approx(1.0, abs=1e-5)


def test_class_weights_reach_the_loss(relation_encoder):
    nlp = anonymised_nlp(relation_encoder, class_weights="balanced")
    examples = gad_examples(6)  # 3 related, 3 not: balanced weights are 1.0 each
    nlp.initialize(lambda: examples)
    assert nlp.get_pipe("relation_extractor").cfg["resolved_class_weights"] == [1.0, 1.0]
    nlp = anonymised_nlp(relation_encoder, class_weights={"NO_RELATION": 3.0})
    nlp.initialize(lambda: examples)
    extractor = nlp.get_pipe("relation_extractor")
    assert extractor.cfg["resolved_class_weights"] == [3.0, 1.0]
    # Equal logits: the weighted gradient of a negative pair is three times that of a positive.
    owners = [(i, *pair) for i, eg in enumerate(examples[:2]) for pair in extractor.candidate_pairs(eg.predicted)]
    _, gradient = extractor.get_loss(examples[:2], (owners, numpy.zeros((2, 2), dtype="float32")))
    assert gradient[1, 0] == pytest.approx(3 * gradient[0, 1])
    with pytest.raises(ValueError, match="unknown labels"):
        anonymised_nlp(relation_encoder, class_weights={"CAUSES": 2.0}).initialize(lambda: examples)


@pytest.mark.parametrize("device", DEVICES, indirect=True)
def test_anonymised_mode_feeds_its_encoder_on_the_encoders_device(device, relation_encoder):
    from spacy_biolm.encoders.devices import module_device

    nlp = anonymised_nlp(relation_encoder)
    examples = gad_examples(4)
    optimizer = nlp.initialize(lambda: examples)
    hf_model = nlp.get_pipe("relation_extractor").model.get_ref("encoder").layers[0].shims[0]._model
    seen = record_input_devices(hf_model)
    nlp.update(examples, sgd=optimizer)
    predicted = list(nlp.pipe([eg.predicted.copy() for eg in examples]))
    assert seen and set(seen) == {module_device(hf_model)}
    assert module_device(hf_model).type == ("cuda" if device == "gpu" else "cpu")
    assert all(0.0 < rel.score <= 1.0 for doc in predicted for rel in doc._.relations)
