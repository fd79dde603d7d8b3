"""typed_ner: learns only from Docs annotating its types, adds its entities beside earlier ones."""

import pytest
import spacy
from spacy.tokens import Span
from spacy.training import Example

from spacy_biolm.doc_data import annotated_entity_types, set_annotated_entity_types
from spacy_biolm.pipes.typed_ner.component import INIT_SAMPLE_SIZE, learning_view
from spacy_biolm.testing import overfit

SMALL_TOK2VEC = {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "width": 32, "depth": 1,
                 "embed_size": 500, "window_size": 1, "maxout_pieces": 2, "subword_features": True}
SMALL_MODEL = {"@architectures": "spacy.TransitionBasedParser.v2", "state_type": "ner", "extra_state_tokens": False,
               "hidden_width": 32, "maxout_pieces": 2, "use_upper": True, "nO": None, "tok2vec": SMALL_TOK2VEC}


def _doc(nlp, text, ents, types):
    doc = nlp.make_doc(text)
    doc.set_ents([Span(doc, start, end, label=label) for start, end, label in ents], default="outside")
    set_annotated_entity_types(doc, types)
    return doc


def _corpus(nlp):
    """A disease corpus whose sentences mention genes it does not annotate, and a gene corpus
    whose sentences mention diseases it does not annotate: each type's only evidence of the
    other word being no entity would be the other corpus's O tags."""
    examples = []
    for _ in range(4):
        examples.append(Example(nlp.make_doc("BRCA1 carriers get breast cancer ."),
                                _doc(nlp, "BRCA1 carriers get breast cancer .", [(3, 5, "DISEASE")], ["DISEASE"])))
        examples.append(Example(nlp.make_doc("breast cancer needs BRCA1 repair ."),
                                _doc(nlp, "breast cancer needs BRCA1 repair .", [(3, 4, "GENE")], ["GENE"])))
        examples.append(Example(nlp.make_doc("carriers get BRCA1 tests ."),
                                _doc(nlp, "carriers get BRCA1 tests .", [(2, 3, "GENE")], ["GENE"])))
        examples.append(Example(nlp.make_doc("breast cancer needs care ."),
                                _doc(nlp, "breast cancer needs care .", [(0, 2, "DISEASE")], ["DISEASE"])))
    return examples


def _pipeline():
    nlp = spacy.blank("en")
    nlp.add_pipe("typed_ner", name="ner", config={"entity_types": ["DISEASE"], "model": SMALL_MODEL})
    nlp.add_pipe("typed_ner", name="ner_gene", config={"entity_types": ["GENE"], "model": SMALL_MODEL})
    return nlp


def test_each_typed_ner_learns_its_type_where_the_other_corpus_says_O():
    nlp = _pipeline()
    examples = _corpus(nlp)
    nlp.initialize(lambda: examples)
    assert nlp.get_pipe("ner").labels == ("DISEASE",) and nlp.get_pipe("ner_gene").labels == ("GENE",)
    overfit(nlp, examples, steps=60, learn_rate=0.01)
    # Each type where the other type's corpus says O: BRCA1 in a disease sentence, breast cancer in a gene one.
    for text in ("BRCA1 carriers get breast cancer .", "breast cancer needs BRCA1 repair ."):
        assert {("BRCA1", "GENE"), ("breast cancer", "DISEASE")} <= {(e.text, e.label_) for e in nlp(text).ents}


def test_a_plain_ner_on_the_same_corpora_learns_that_the_other_type_is_no_entity():
    """The fault typed_ner exists for: one ner for both types drops BRCA1 from the disease sentence."""
    nlp = spacy.blank("en")
    nlp.add_pipe("ner", config={"model": SMALL_MODEL})
    examples = _corpus(nlp)
    nlp.initialize(lambda: examples)
    overfit(nlp, examples, steps=60, learn_rate=0.01)
    assert [e.text for e in nlp("BRCA1 carriers get breast cancer .").ents] == ["breast cancer"]


def test_learning_view_masks_docs_without_its_types_and_makes_other_types_outside():
    nlp = spacy.blank("en")
    disease = _doc(nlp, "BRCA1 carriers get breast cancer .", [(3, 5, "DISEASE")], ["DISEASE"])
    masked = learning_view(disease, ["GENE"])
    assert masked is not disease and all(t.ent_iob_ == "" for t in masked)
    assert learning_view(disease, ["DISEASE"]) is disease
    assert all(t.ent_iob_ == "" for t in learning_view(disease, ["DISEASE", "GENE"]))  # annotates only one of two
    both = _doc(nlp, "BRCA1 carriers get breast cancer .", [(0, 1, "GENE"), (3, 5, "DISEASE")], ["DISEASE", "GENE"])
    view = learning_view(both, ["GENE"])
    assert [(e.text, e.label_) for e in view.ents] == [("BRCA1", "GENE")]
    assert [t.ent_iob_ for t in view] == ["B", "O", "O", "O", "O", "O"]
    assert [e.label_ for e in both.ents] == ["GENE", "DISEASE"]  # the reference itself is untouched
    # A corpus's missing tokens (a label that is part of a type, as BioNLP13CG's Cancer) stay missing.
    both.set_ents([], missing=[both[3:5]], default="unmodified")
    assert [t.ent_iob_ for t in learning_view(both, ["GENE"])] == ["B", "O", "O", "", "", "O"]


def test_every_typed_ner_learns_from_its_view_with_the_examples_one_alignment():
    nlp = _pipeline()
    disease, gene = _corpus(nlp)[:2]
    views = [nlp.get_pipe(name)._learning_example(eg) for name in ("ner", "ner_gene") for eg in (disease, gene)]
    assert [view is eg for view, eg in zip(views, [disease, gene] * 2)] == [True, False, False, True]
    assert views[1].alignment is gene.alignment and views[2].alignment is disease.alignment
    assert all(t.ent_iob_ == "" for t in views[1].reference) and views[1].predicted is gene.predicted


def test_earlier_entities_are_kept_and_never_overlapped():
    nlp = _pipeline()
    examples = _corpus(nlp)
    nlp.initialize(lambda: examples)
    overfit(nlp, examples, steps=60, learn_rate=0.01)
    text = "BRCA1 carriers get breast cancer ."
    alone = {(e.start, e.end, e.label_) for e in nlp(text).ents}
    assert (0, 1, "GENE") in alone  # what ner_gene finds without the given entity below
    doc = nlp.make_doc(text)
    doc.set_ents([Span(doc, 0, 2, label="CELL", kb_id="CL:1")], default="missing")  # a given entity over BRCA1
    doc = nlp.get_pipe("ner_gene")(nlp.get_pipe("ner")(doc))
    assert [(e.text, e.label_, e.kb_id_) for e in doc.ents][0] == ("BRCA1 carriers", "CELL", "CL:1")
    assert {(e.start, e.end, e.label_) for e in doc.ents[1:]} == {e for e in alone if e[0] >= 2}  # the rest, as without it
    assert all(t.ent_iob_ for t in doc)  # every token annotated, as after spaCy's ner
    # Left out of doc.ents by the overlap, kept in the span group beside the given entity.
    assert ("BRCA1", "GENE") in {(s.text, s.label_) for s in doc.spans["entities"]}
    assert ("BRCA1 carriers", "CELL") in {(s.text, s.label_) for s in doc.spans["entities"]}
    assert {(s.start, s.end, s.label_) for s in doc.spans["entities"]} >= {(e.start, e.end, e.label_) for e in doc.ents}


def test_sentencizer_boundaries_do_not_cut_an_entity_and_stay_on_the_doc():
    """Trained without sentence boundaries (spaCy's training runs no sentencizer), a typed_ner
    predicts without them too: BC2GM's gene ``PU . 1`` spans the sentencizer's boundary."""
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("typed_ner", name="ner_gene", config={"entity_types": ["GENE"], "model": SMALL_MODEL})
    text = "PU . 1 binds DNA ."
    examples = [Example(nlp.make_doc(text), _doc(nlp, text, [(0, 3, "GENE")], ["GENE"]))] * 4
    nlp.initialize(lambda: examples)
    overfit(nlp, examples, steps=40, learn_rate=0.01)
    doc = nlp(text)
    assert [(e.text, e.label_) for e in doc.ents] == [("PU . 1", "GENE")]
    assert [s.text for s in doc.sents] == ["PU .", "1 binds DNA ."]  # the sentencizer's, restored


def test_labels_come_from_the_config_only():
    nlp = spacy.blank("en")
    ner = nlp.add_pipe("typed_ner", config={"entity_types": ["GENE"], "model": SMALL_MODEL})
    with pytest.raises(ValueError, match="recognises only \\['GENE'\\]"):
        ner.add_label("DISEASE")
    with pytest.raises(ValueError, match="entity_types must name"):
        spacy.blank("en").add_pipe("typed_ner", config={"model": SMALL_MODEL})


def test_initialize_reads_a_sample_of_the_stream_not_all_of_it():
    # spaCy's parser validates every Example it is given; a multi-task stream is long.
    nlp = _pipeline()
    examples = _corpus(nlp) * 20
    read = []

    def stream():
        for eg in examples:
            read.append(eg)
            yield eg

    nlp.get_pipe("ner").initialize(stream, nlp=nlp)
    assert len(read) == INIT_SAMPLE_SIZE < len(examples)
    assert nlp.get_pipe("ner").labels == ("DISEASE",)
    with pytest.raises(TypeError):
        nlp.get_pipe("ner_gene").initialize(lambda: iter([]), nlp=nlp)


def test_a_batch_that_teaches_the_last_listener_nothing_still_updates_the_shared_tok2vec():
    # The last listener's backprop is what updates a shared tok2vec (or transformer); ner_gene is
    # last here, and a batch of disease sentences teaches it nothing.
    import numpy

    listening = {**SMALL_MODEL, "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 32, "upstream": "*"}}
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", config={"model": SMALL_TOK2VEC})
    nlp.add_pipe("typed_ner", name="ner", config={"entity_types": ["DISEASE"], "model": listening})
    nlp.add_pipe("typed_ner", name="ner_gene", config={"entity_types": ["GENE"], "model": listening})
    examples = _corpus(nlp)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)  # the upper layers start at zero: no gradient reaches tok2vec before
    diseases = [eg for eg in examples if annotated_entity_types(eg.reference) == {"DISEASE"}]
    losses = nlp.update(diseases, sgd=False)  # no optimizer step: the gradients stay to be read
    tok2vec = nlp.get_pipe("tok2vec").model
    gradients = [node.get_grad(name) for node in tok2vec.walk() for name in node.param_names if node.has_grad(name)]
    assert losses["ner_gene"] == 0.0 and losses["ner"] > 0
    assert gradients and any(numpy.abs(gradient).sum() > 0 for gradient in gradients)


def test_round_trip_keeps_types_and_predictions(tmp_path):
    nlp = _pipeline()
    examples = _corpus(nlp)
    nlp.initialize(lambda: examples)
    overfit(nlp, examples, steps=40, learn_rate=0.01)
    nlp.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert loaded.get_pipe("ner_gene").entity_types == ("GENE",)
    text = "BRCA1 carriers get breast cancer ."
    assert [(e.start, e.end, e.label_) for e in loaded(text).ents] == [(e.start, e.end, e.label_) for e in nlp(text).ents]
    assert loaded.get_pipe("ner_gene").cfg["spans_key"] == "entities"
    before, after = nlp(text), loaded(text)
    assert [(s.start, s.end, s.label_) for s in after.spans["entities"]] == \
        [(s.start, s.end, s.label_) for s in before.spans["entities"]]


def _listening_pipeline(upstream: str, encoder=None):
    """A shared ``tok2vec`` or ``transformer`` (on ``encoder``) and a DISEASE and a GENE typed_ner
    listening to it, initialised on the two corpora."""
    if upstream == "tok2vec":
        listener = {"@architectures": "spacy.Tok2VecListener.v1", "width": 32, "upstream": "*"}
        nlp = spacy.blank("en")
        # No window: a token's vector is its own, so a Doc's gradient does not depend on its batch.
        nlp.add_pipe("tok2vec", config={"model": {**SMALL_TOK2VEC, "window_size": 0}})
    else:
        from spacy_biolm.testing import transformer_pipeline

        listener = {"@architectures": "spacy-transformers.TransformerListener.v1", "grad_factor": 1.0,
                    "pooling": {"@layers": "reduce_mean.v1"}, "upstream": "*"}
        nlp = transformer_pipeline(encoder)
    for name, types in (("ner", ["DISEASE"]), ("ner_gene", ["GENE"])):
        nlp.add_pipe("typed_ner", name=name, config={"entity_types": types, "model": {**SMALL_MODEL, "tok2vec": listener}})
    return nlp


def _tok2vec_gradients(nlp, examples):
    """The shared tok2vec's gradients from one update on ``examples`` (none accumulated before;
    spaCy's parser draws random numbers in an update)."""
    from spacy.util import fix_random_seed

    fix_random_seed(0)
    params = [(node, name) for node in nlp.get_pipe("tok2vec").model.walk() for name in node.param_names]
    for node, name in params:
        if node.has_grad(name):
            node.set_grad(name, node.ops.alloc(node.get_grad(name).shape))
    nlp.update(examples, sgd=False, drop=0.0)
    return [node.get_grad(name).copy() for node, name in params if node.has_grad(name)]


def test_each_typed_ner_reads_only_the_docs_that_teach_it():
    nlp = _listening_pipeline("tok2vec")
    examples = _corpus(nlp)
    nlp.initialize(lambda: examples)
    read = {}
    for name in ("ner", "ner_gene"):
        listener = next(node for node in nlp.get_pipe(name).model.walk() if node.name == "tok2vec-listener")

        def spy(model, docs, is_train, forward=listener._func, name=name):
            read[name] = [doc.text for doc in docs]
            return forward(model, docs, is_train)

        listener._func = spy
    nlp.update(examples[:4], drop=0.0)  # a disease, two gene and a disease sentence
    texts = [eg.reference.text for eg in examples[:4]]
    assert read == {"ner": [texts[0], texts[3]], "ner_gene": [texts[1], texts[2]]}


def test_the_shared_tok2vec_gets_the_gradient_of_the_docs_that_teach_its_listener():
    """Docs a typed_ner does not learn from give the shared tok2vec no gradient, and those it
    learns from the gradient they give alone, at their place in the batch: a pipeline whose only
    typed_ner is DISEASE's gets the same tok2vec gradient from interleaved disease and gene
    sentences as from the disease sentences alone."""
    import numpy

    nlp = _listening_pipeline("tok2vec")
    nlp.remove_pipe("ner_gene")
    examples = _corpus(nlp)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)  # the upper layers start at zero: no gradient reaches tok2vec before
    diseases = [eg for eg in examples if annotated_entity_types(eg.reference) == {"DISEASE"}]
    alone, interleaved = _tok2vec_gradients(nlp, diseases), _tok2vec_gradients(nlp, examples)
    assert alone and any(numpy.abs(gradient).sum() > 0 for gradient in alone)
    for a, b in zip(alone, interleaved):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


def test_the_shared_transformer_gets_the_gradient_of_the_docs_that_teach_its_listener(tiny_encoder):
    """As for a tok2vec, through spacy-transformers' listener and per-Doc outputs."""
    import torch

    nlp = _listening_pipeline("transformer", tiny_encoder)
    nlp.remove_pipe("ner_gene")
    examples = _corpus(nlp)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)  # the upper layers start at zero: no gradient reaches the encoder before
    encoder = next(node.shims[0]._model for node in nlp.get_pipe("transformer").model.walk() if node.shims)
    for module in encoder.modules():  # no dropout: the same Docs give the same gradient
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0

    def gradients(batch):
        from spacy.util import fix_random_seed

        fix_random_seed(0)
        encoder.zero_grad(set_to_none=True)
        nlp.update(batch, sgd=False, drop=0.0)
        return [p.grad.clone() for p in encoder.parameters() if p.grad is not None]

    diseases = [eg for eg in examples if annotated_entity_types(eg.reference) == {"DISEASE"}]
    alone, interleaved = gradients(diseases), gradients(examples)
    assert alone and len(alone) == len(interleaved) and any(g.abs().sum() > 0 for g in alone)
    for a, b in zip(alone, interleaved):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
