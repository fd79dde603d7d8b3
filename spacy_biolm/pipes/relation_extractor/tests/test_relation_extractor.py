"""relation_extractor: pairs, anonymisation, scorer, training, serialisation, bad input."""

import random
import time
import warnings

import numpy
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

from spacy_biolm.doc_data import Relation, get_relations, give_entities, set_relations
from spacy_biolm.pipes.relation_extractor.data import (
    PairLimitExceeded,
    anonymise,
    candidate_pairs,
    iter_candidate_pairs,
)
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


def all_pairs_reference(entities, pair_types=None):
    """Every ordered pair of the whole Doc, filtered afterwards: the candidates before the window
    (the n² enumeration), the oracle for a Doc that is one sentence."""
    allowed = {tuple(p) for p in pair_types} if pair_types else None
    pairs = []
    for head in entities:
        for tail in entities:
            if head.start < tail.end and tail.start < head.end:
                continue  # the same or overlapping entities
            unordered = allowed is None or head.label_ == tail.label_
            if (allowed is None or (head.label_, tail.label_) in allowed) and not (unordered and head.start > tail.start):
                pairs.append((head, tail))
    return sorted(pairs, key=lambda p: (p[0].start, p[1].start))


@pytest.mark.parametrize("pair_types", [None, [["GENE", "DISEASE"]], [["DISEASE", "GENE"], ["GENE", "GENE"]],
                                        [["CHEMICAL", "GENE"], ["GENE", "DISEASE"]]])
def test_sentence_window_equals_all_pairs_on_a_one_sentence_doc(pair_types):
    rng = random.Random(len(pair_types or ()))
    for _ in range(20):
        n_words = rng.randint(1, 60)
        ents, position = [], 0
        while position < n_words:
            length = rng.randint(1, 3)
            if rng.random() < 0.4 and position + length <= n_words:
                ents.append((position, position + length, rng.choice(["GENE", "DISEASE", "CHEMICAL"])))
            position += length + rng.randint(0, 2)
        doc = make_doc([f"w{i}" for i in range(n_words)], ents)
        pairs, skipped = candidate_pairs(doc.ents, pair_types)  # the default window: "sentence"
        assert skipped == 0
        assert [(h.start, t.start) for h, t in pairs] == [(h.start, t.start) for h, t in all_pairs_reference(doc.ents, pair_types)]
        # A token window wider than the Doc is the same.
        assert candidate_pairs(doc.ents, pair_types, window=n_words)[0] == pairs


def test_window_bounds_the_pairs_of_a_many_entity_doc():
    # 50 sentences of 10 tokens: GENE at 0-1, DISEASE at 4-6, GENE at 8-9 (tokens in the sentence).
    words, ents, sent_starts = [], [], []
    for s in range(50):
        base = 10 * s
        words += [f"t{base + i}" for i in range(10)]
        ents += [(base, base + 1, "GENE"), (base + 4, base + 6, "DISEASE"), (base + 8, base + 9, "GENE")]
        sent_starts += [True] + [False] * 9
    doc = make_doc(words, ents)
    # Without sentence boundaries the "sentence" window is the whole Doc: 100 genes x 50 diseases.
    assert len(candidate_pairs(doc.ents, [["GENE", "DISEASE"]])[0]) == 100 * 50
    for token, is_start in zip(doc, sent_starts):
        token.is_sent_start = is_start
    # Per sentence: the two genes with its disease; unrestricted: the 3 pairs of its 3 entities.
    pairs, _ = candidate_pairs(doc.ents, [["GENE", "DISEASE"]])
    assert len(pairs) == 2 * 50
    assert all(h.sent == t.sent for h, t in pairs)
    assert len(candidate_pairs(doc.ents)[0]) == 3 * 50
    # Tokens between the entities of a sentence: first gene-disease 3, disease-second gene 2, the
    # two genes 7; across a boundary: second gene-next first gene 1, disease-next first gene 4,
    # second gene-next disease 5 (49 boundaries); the nearest others are 8 apart.
    for window, expected in [(0, 0), (1, 49), (2, 49 + 50), (3, 49 + 100), (4, 49 * 2 + 100), (5, 49 * 3 + 100),
                             (7, 49 * 3 + 150)]:
        pairs, _ = candidate_pairs(doc.ents, window=window)
        assert len(pairs) == expected, window
        assert all(t.start - h.end <= window for h, t in pairs)
    # Head first by type even when the head comes later: the window is symmetric.
    pairs, _ = candidate_pairs(doc.ents, [["DISEASE", "GENE"]], window=3)
    assert [(h.label_, t.label_) for h, t in pairs[:2]] == [("DISEASE", "GENE")] * 2
    assert len(pairs) == 100 and [(h.start, t.start) for h, t in pairs[:3]] == [(4, 0), (4, 8), (14, 10)]


def test_huge_entity_counts_are_swept_not_squared():
    n = 20_000
    doc = Doc(spacy.blank("en").vocab, words=["w"] * (2 * n))
    doc.ents = [Span(doc, 2 * i, 2 * i + 1, label="GENE" if i % 2 else "DISEASE") for i in range(n)]
    generated = iter_candidate_pairs(doc.ents, window=20)
    assert next(generated)[1].start == 2  # lazy: the first pair without the rest
    started = time.perf_counter()
    # Entity i pairs with the next 10 (1 token between neighbours; the 10th is 19 tokens away).
    count = sum(1 for _ in iter_candidate_pairs(doc.ents, window=20))
    assert count == sum(min(10, n - 1 - i) for i in range(n))
    typed = sum(1 for _ in iter_candidate_pairs(doc.ents, [["GENE", "DISEASE"]], window=20))
    # A gene (odd index) and a disease (even) are an odd number of places apart: at most 9.
    assert typed == sum(1 for i in range(1, n, 2) for j in range(i - 9, i + 10, 2) if 0 <= j < n)
    assert time.perf_counter() - started < 10  # n² = 4e8 pairs would take minutes
    pairs, skipped = candidate_pairs(doc.ents, window=20, max_pairs=1000)
    assert len(pairs) == 1000 and skipped == count - 1000
    assert all(t.start - h.start == 2 for h, t in pairs)  # the closest kept


def test_candidate_window_setting_reaches_the_pairs_and_bad_values_are_errors():
    nlp = spacy.blank("en")
    extractor = nlp.add_pipe("relation_extractor", config={"candidate_window": 2})
    doc = make_doc(["A", "x", "x", "B", "x", "x", "x", "C"], [(0, 1, "GENE"), (3, 4, "GENE"), (7, 8, "GENE")])
    assert [(h.text, t.text) for h, t in extractor.candidate_pairs(doc)] == [("A", "B")]
    assert spacy.blank("en").add_pipe("relation_extractor").cfg["candidate_window"] == "sentence"
    for bad in ("paragraph", -1, True):
        with pytest.raises(ValueError, match="candidate_window"):
            spacy.blank("en").add_pipe("relation_extractor", config={"candidate_window": bad})


def test_fast_mode_pools_span_tokens_and_backprops_to_them_only():
    from thinc.api import Model

    from spacy_biolm.pipes.relation_extractor.model import create_relation_fast, span_tokens

    indices, lengths = span_tokens([0, 3, 7], [2, 4, 12])
    assert indices.tolist() == [0, 1, 3, 7, 8, 9, 10, 11] and lengths.tolist() == [2, 1, 5]
    with pytest.raises(ValueError, match="empty"):
        span_tokens([3], [3])
    rng = numpy.random.default_rng(0)
    vecs = rng.normal(size=(40, 4)).astype("float32")
    gradients = []

    def fixed_vectors(model, docs, is_train):
        def backprop(d_vecs):
            gradients.append(d_vecs[0])
            return []
        return [vecs], backprop

    model = create_relation_fast(Model("fixed_vectors", fixed_vectors, dims={"nO": 4}), hidden_width=8, dropout=0.0, nO=3)
    pairs = [numpy.asarray([[0, 2, 5, 8], [5, 8, 30, 31], [10, 11, 0, 2]], dtype="int32")]
    model.initialize(X=([None], pairs))
    weights = rng.normal(size=(3, 3)).astype("float32")

    def loss(token_vectors):
        vecs[:] = token_vectors
        return float((model.predict(([None], pairs)) * weights).sum())

    original = vecs.copy()
    scores, backprop = model.begin_update(([None], pairs))
    backprop(weights)
    (d_vecs,) = gradients
    # Tokens outside every entity get no gradient; inside, it matches finite differences.
    outside = numpy.ones(len(vecs), dtype=bool)
    outside[[0, 1, 5, 6, 7, 10, 30]] = False
    assert not d_vecs[outside].any() and d_vecs[~outside].any()
    for row, col in [(0, 0), (6, 2), (10, 1), (30, 3)]:
        step = numpy.zeros_like(original)
        step[row, col] = 1e-2
        numeric = (loss(original + step) - loss(original - step)) / 2e-2
        assert numeric == pytest.approx(float(d_vecs[row, col]), rel=0.05, abs=1e-3)


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
    assert anonymise(doc, ents[1], ents[2], placeholders, max_context=1) == "inhibits BC6ENTG and BC6ENTG ."
    assert anonymise(doc, ents[1], ents[2], placeholders, max_context=0) == "BC6ENTG and BC6ENTG"
    assert anonymise(doc, ents[0], ents[1], {}) == "@CHEMICAL$ inhibits @GENE$ and COX2 ."
    # Sentences: only the pair's sentence(s) are used, their other entities replaced (not those of
    # other sentences); the same with the Doc's entities passed in once.
    doc = make_doc(["TNF", "binds", "IL6", "and", "IL2", ".", "COX1", "binds", "aspirin", "and", "COX2", "."],
                   [(0, 1, "GENE"), (2, 3, "GENE"), (4, 5, "GENE"), (6, 7, "GENE"), (8, 9, "CHEMICAL"), (10, 11, "GENE")])
    for token in doc:
        token.is_sent_start = token.i in (0, 6)
    ents = doc.ents
    for entities in (None, ents):
        assert anonymise(doc, ents[4], ents[3], placeholders, "BC6OTHER", entities=entities) == \
            "BC6ENTG binds BC6ENTC and BC6OTHER ."
        assert anonymise(doc, ents[0], ents[1], placeholders, "BC6OTHER", entities=entities) == \
            "BC6ENTG binds BC6ENTG and BC6OTHER ."
        assert anonymise(doc, ents[2], ents[3], placeholders, "BC6OTHER", entities=entities) == \
            "BC6OTHER binds BC6OTHER and BC6ENTG . BC6ENTG binds BC6OTHER and BC6OTHER ."


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


def test_pairs_come_from_the_given_entities_not_those_a_ner_adds_around_them():
    # GAD labels one pair per sentence: a ner before the extractor (the multi-task release) keeps
    # the gold entities but adds others, whose pairs nobody labelled.
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler", config={"overwrite_ents": True})
    ruler.add_patterns([{"label": "GENE", "pattern": "TP53"}, {"label": "DISEASE", "pattern": "glioma"}])
    extractor = nlp.add_pipe("relation_extractor", config={"pair_types": [["GENE", "DISEASE"]]})
    doc = nlp.make_doc("TP53 and BRCA1 variants in breast cancer and glioma")
    give_entities(doc, [Span(doc, 2, 3, label="GENE"), Span(doc, 5, 7, label="DISEASE")])
    doc = ruler(doc)
    assert len(doc.ents) == 4
    assert [(h.text, t.text) for h, t in extractor.candidate_pairs(doc)] == [("BRCA1", "breast cancer")]
    # Without given entities the extractor pairs doc.ents, the ner's (end-to-end use).
    plain = ruler(nlp.make_doc(doc.text))
    assert [(h.text, t.text) for h, t in extractor.candidate_pairs(plain)] == [("TP53", "glioma")]


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


def chemprot_examples(n=24):
    """Chemical-gene sentences whose CPR label is given by the verb ('inhibits' CPR:4, 'binds' none)."""
    examples = []
    for i in range(n):
        related = i % 2 == 0
        words = ["BC6ENTC", "inhibits" if related else "binds", "BC6ENTG", "."]
        ents = [(0, 1, "CHEMICAL"), (2, 3, "GENE")]
        reference = make_doc(words, ents, [(0, 1, "CPR:4")] if related else [])
        examples.append(Example(make_doc(words, ents), reference))
    return examples


def test_two_extractors_of_other_pair_types_share_a_pipeline_each_with_its_own_relations(relation_encoder, tmp_path):
    # The release: GAD's gene-disease extractor and ChemProt's chemical-gene one on one transformer,
    # their corpora read as multi-task training reads them (the gold Docs' entities marked missing,
    # the predicted Docs given them).
    from spacy_biolm.corpora.multitask import MultiTaskCorpus, TaskCorpus

    nlp = fast_nlp(relation_encoder)
    nlp.add_pipe("relation_extractor", name="relation_chemprot", config={
        "labels": ["CPR:4"], "pair_types": [["CHEMICAL", "GENE"]],
        "scorer": {"@scorers": "spacy-biolm.relations_scorer.v1", "prefix": "chemprot"}})
    tasks = {}
    for name, corpus in (("gad", gad_examples()), ("chemprot", chemprot_examples())):
        DocBin(docs=[eg.reference for eg in corpus], store_user_data=True).to_disk(tmp_path / f"{name}.spacy")
        tasks[name] = TaskCorpus(tmp_path / f"{name}.spacy", annotates=["relations"], gold_entities=True)
    examples = list(MultiTaskCorpus(tasks, schedule="round_robin")(nlp))
    assert examples[0].reference.ents == () and examples[0].predicted.ents  # as the release's training reads them
    optimizer = nlp.initialize(lambda: examples)  # neither extractor takes the other's labels for unknown ones
    for _ in range(40):
        nlp.update(examples, sgd=optimizer)
    scores = nlp.evaluate(examples)
    assert scores["rel_micro_f"] == 1.0 and scores["chemprot_micro_f"] == 1.0
    assert set(scores["rel_f_per_type"]) == {"ASSOCIATION"} and set(scores["chemprot_f_per_type"]) == {"CPR:4"}
    # evaluate_relations scores each extractor of the saved pipeline on its own test set, under the rel_ keys.
    from spacy_biolm.evaluation.relations import evaluate_relations

    nlp.to_disk(tmp_path / "pipeline")
    for component, task in (("relation_extractor", "gad"), ("relation_chemprot", "chemprot")):
        scored = evaluate_relations(tmp_path / "pipeline", tmp_path / f"{task}.spacy", component=component)
        assert scored["rel_micro_f"] == 1.0 and scored["docs"] == 24, component
    assert set(scored["rel_f_per_type"]) == {"CPR:4"}
    # One Doc with both pair types: each extractor replaces the relations of its own pairs and keeps the other's.
    doc = make_doc(["@GENE$", "causes", "@DISEASE$", ";", "BC6ENTC", "inhibits", "BC6ENTG"],
                   [(0, 1, "GENE"), (2, 3, "DISEASE"), (4, 5, "CHEMICAL"), (6, 7, "GENE")], [(0, 1, "ASSOCIATION")])
    gad, chemprot = nlp.get_pipe("relation_extractor"), nlp.get_pipe("relation_chemprot")
    assert [r.label for r in chemprot.own_relations(doc)] == [] and [r.label for r in gad.own_relations(doc)] == ["ASSOCIATION"]
    doc = chemprot(nlp.get_pipe("transformer")(doc))
    label_at = {e.start: e.label_ for e in doc.ents}
    pairs = {(label_at[r.head.start], label_at[r.tail.start], r.label) for r in doc._.relations}
    assert ("GENE", "DISEASE", "ASSOCIATION") in pairs  # GAD's relation stays
    assert all(label.startswith("CPR") for head, tail, label in pairs if (head, tail) == ("CHEMICAL", "GENE"))
    assert {label for *_, label in pairs} <= {"ASSOCIATION", "CPR:4"}
    own = len(chemprot.own_relations(doc))
    again = gad(doc)  # replaces GAD's pairs' relations, keeps ChemProt's
    assert len(chemprot.own_relations(again)) == own and all(r.label == "ASSOCIATION" for r in gad.own_relations(again))
    # A label unknown to an extractor is still an error where the pair is of its types.
    bad = make_doc(["BC6ENTC", "x", "BC6ENTG"], [(0, 1, "CHEMICAL"), (2, 3, "GENE")], [(0, 1, "CPR:9")])
    with pytest.raises(ValueError, match="'CPR:9' is not one of the configured labels"):
        chemprot.initialize(lambda: [Example(bad.copy(), bad)], nlp=nlp)


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
    from spacy_biolm.encoders.pair_encoder import tokenize_windows
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
    encoder = model.get_ref("encoder")
    windows = tokenize_windows(tokenizer, [text], encoder.attrs["window"], encoder.attrs["stride"])
    assert len(windows["pair_index"]) > 1 and set(windows["pair_index"]) == {0}
    probs = nlp.get_pipe("relation_extractor").predict([doc])[1]
    assert probs.shape == (1, 2) and probs.sum() == pytest.approx(1.0, abs=1e-5)


def test_a_long_doc_without_sentences_is_never_read_whole_per_pair(relation_encoder, monkeypatch):
    from spacy_biolm.pipes.relation_extractor import model as relation_model

    nlp = anonymised_nlp(relation_encoder)
    nlp.initialize(lambda: gad_examples(2))
    model = nlp.get_pipe("relation_extractor").model
    words = ["filler"] * 3000 + ["@GENE$", "causes", "@DISEASE$"] + ["filler"] * 3000
    doc = make_doc(words, [(3000, 3001, "GENE"), (3002, 3003, "DISEASE")])
    tokenised = []
    count_pieces = relation_model._n_pieces
    monkeypatch.setattr(relation_model, "_n_pieces", lambda tok, texts: tokenised.extend(texts) or count_pieces(tok, texts))
    (text,) = relation_model.pair_texts(model, [doc], [numpy.asarray([[3000, 3001, 3002, 3003]])])
    window = model.get_ref("encoder").attrs["window"]
    assert max(len(t.split()) for t in tokenised) <= 2 * window + 3
    # The same text as a Doc with less filler gives (its cut keeps at most 32 tokens each side).
    short = make_doc(["filler"] * 40 + ["@GENE$", "causes", "@DISEASE$"] + ["filler"] * 40,
                     [(40, 41, "GENE"), (42, 43, "DISEASE")])
    assert text == relation_model.pair_texts(model, [short], [numpy.asarray([[40, 41, 42, 43]])])[0]
    assert "@GENE$ causes @DISEASE$" in text


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
