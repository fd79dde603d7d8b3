"""Halving a pipeline's encoders: a pair encoder's weights stored in int8 load back as float32 and
answer as before; the transformer's halving is tested with the multi-task release
(spacy_biolm/tests/test_multitask_release.py)."""

import pytest


def save_yes_no_pipeline(encoder, path):
    from spacy.training import Example

    from spacy_biolm import make_question_doc
    from spacy_biolm.testing import make_qa_nlp

    nlp = make_qa_nlp(encoder, "yes_no")
    examples = []
    for question, answer in (("Is BRCA1 a gene ?", "yes"), ("Is TP53 a kinase ?", "no")):
        gold = make_question_doc(nlp, question, "BRCA1 is a gene .")
        gold.cats = {"yes": float(answer == "yes"), "no": float(answer == "no")}
        examples.append(Example(make_question_doc(nlp, question, "BRCA1 is a gene ."), gold))
    nlp.initialize(lambda: examples)
    nlp.to_disk(path)


def shims(pipeline):
    import srsly

    model = srsly.msgpack_loads((pipeline / "yes_no" / "model").read_bytes())
    return [srsly.msgpack_loads(shim) for node in model["shims"] for shim in node]


def test_a_pair_encoder_is_stored_in_int8_and_answers_as_before(tiny_qa_encoder, tmp_path):
    import spacy

    from spacy_biolm import make_question_doc
    from spacy_biolm.encoders.half_precision import INT8_STORAGE, halve_pipeline

    save_yes_no_pipeline(tiny_qa_encoder, tmp_path / "full")
    assert set(halve_pipeline(tmp_path / "full", tmp_path / "small")) == {"yes_no"}
    (before,), (after,) = shims(tmp_path / "full"), shims(tmp_path / "small")
    assert after.get(INT8_STORAGE) is True and not before.get(INT8_STORAGE)
    assert len(after["state"]) < 0.4 * len(before["state"])  # matrices in int8: a quarter of float32, plus scales
    small = spacy.load(tmp_path / "small")
    (shim,) = [shim for node in small.get_pipe("yes_no").model.walk() for shim in node.shims]
    assert {str(p.dtype) for p in shim._model.parameters()} == {"torch.float32"}
    full = spacy.load(tmp_path / "full")
    passage = "BRCA1 mutations cause hereditary breast cancer . TP53 is mutated in many tumours ."
    for question in ("Do BRCA1 mutations cause breast cancer ?", "Is TP53 a kinase ?"):
        expected = full.get_pipe("yes_no")(make_question_doc(full, question, passage)).cats
        assert small.get_pipe("yes_no")(make_question_doc(small, question, passage)).cats == pytest.approx(expected, abs=2e-2)
    # Halving an int8 copy again leaves its int8 state as it is.
    again = halve_pipeline(tmp_path / "small", tmp_path / "again")
    assert "yes_no" not in again
    assert (tmp_path / "again" / "yes_no" / "model").read_bytes() == (tmp_path / "small" / "yes_no" / "model").read_bytes()


def test_a_pair_encoder_named_float16_keeps_float16_and_a_wrong_name_writes_nothing(tiny_qa_encoder, tmp_path):
    import torch
    from io import BytesIO

    from spacy_biolm.encoders.half_precision import INT8_STORAGE, halve_pipeline

    save_yes_no_pipeline(tiny_qa_encoder, tmp_path / "full")
    assert set(halve_pipeline(tmp_path / "full", tmp_path / "half", float16=["yes_no"])) == {"yes_no"}
    (before,), (after,) = shims(tmp_path / "full"), shims(tmp_path / "half")
    assert not after.get(INT8_STORAGE)
    state = torch.load(BytesIO(after["state"]), map_location="cpu")
    assert {str(t.dtype) for t in state.values() if t.is_floating_point()} == {"torch.float16"}
    assert 0.4 * len(before["state"]) < len(after["state"]) < 0.6 * len(before["state"])
    with pytest.raises(ValueError, match="no component answer_reranker"):
        halve_pipeline(tmp_path / "full", tmp_path / "other", float16=["answer_reranker"])
    assert not (tmp_path / "other").exists()
