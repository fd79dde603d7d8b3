"""train_precision: training passes in bfloat16 autocast that track float32's, float32
predictions whatever the setting, float32 where the device has no native bfloat16, bad settings
refused."""

import numpy
import pytest
import spacy

from spacy_biolm.encoders import PairEncoder
from spacy_biolm.encoders import precision

from .test_length_sorted import TEXTS, _outputs, _pipeline, _training_pass

needs_native_bf16 = pytest.mark.skipif(
    not precision.native_bfloat16(__import__("torch").device("cpu")),
    reason="this CPU has no native bfloat16 (AMX, AVX512-BF16): train_precision trains in float32 here")


def _without_dropout(torch_model):
    import torch

    for module in torch_model.modules():  # both passes must be deterministic
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0


def _close(a, b, tolerance: float) -> bool:
    """Whether ``a`` is within ``tolerance`` of ``b``, relative to ``b``'s largest entry."""
    return float((a - b).abs().max()) <= tolerance * max(float(b.abs().max()), 1e-6)


def test_settings_are_checked(tiny_qa_encoder):
    with pytest.raises(ValueError, match="train_precision must be one of float32, bfloat16"):
        _pipeline(tiny_qa_encoder, train_precision="float16")
    with pytest.raises(ValueError, match="two ways to train in lower precision"):
        _pipeline(tiny_qa_encoder, train_precision="bfloat16", mixed_precision=True)
    with pytest.raises(ValueError, match="train_precision must be one of"):
        PairEncoder(str(tiny_qa_encoder), train_precision="bf16")
    with pytest.raises(ValueError, match="two ways to train in lower precision"):
        PairEncoder(str(tiny_qa_encoder), train_precision="bfloat16", mixed_precision=True)


@needs_native_bf16
def test_bfloat16_training_tracks_float32_and_predictions_stay_float32(tiny_qa_encoder, tmp_path):
    import torch

    nlp = _pipeline(tiny_qa_encoder, train_precision="bfloat16")
    model = nlp.get_pipe("transformer").model
    assert model.attrs["train_precision"] == "bfloat16"
    _without_dropout(model.transformer)
    docs = [nlp.make_doc(t) for t in TEXTS]
    bf16_hidden, bf16_grads = _training_pass(model, docs, d_seed=0)
    model.attrs["train_precision"] = "float32"
    fp32_hidden, fp32_grads = _training_pass(model, docs, d_seed=0)
    assert all(h.dtype == torch.float32 for h in bf16_hidden)
    # Autocast ran (bfloat16 keeps 8 bits of mantissa: the states differ) and tracked float32.
    assert any(not torch.equal(a, b) for a, b in zip(bf16_hidden, fp32_hidden))
    assert all(_close(a, b, 0.05) for a, b in zip(bf16_hidden, fp32_hidden))
    assert sorted(bf16_grads) == sorted(fp32_grads) and len(fp32_grads) > 10
    for name, grad in fp32_grads.items():
        if float(grad.abs().max()) > 1e-3:  # the direction of every gradient that carries signal
            cosine = torch.nn.functional.cosine_similarity(bf16_grads[name].flatten(), grad.flatten(), dim=0)
            assert float(cosine) > 0.99, (name, float(cosine))

    # Predictions are float32 whatever the setting, and the setting is saved with the pipeline.
    _, fp32_predicted = _outputs(nlp, TEXTS)
    model.attrs["train_precision"] = "bfloat16"
    _, bf16_predicted = _outputs(nlp, TEXTS)
    assert all(numpy.array_equal(a, b) for a, b in zip(bf16_predicted, fp32_predicted))
    nlp.to_disk(tmp_path / "nlp")
    assert spacy.load(tmp_path / "nlp").get_pipe("transformer").model.attrs["train_precision"] == "bfloat16"


def test_without_native_bfloat16_training_runs_float32_with_a_warning(tiny_qa_encoder, monkeypatch):
    import torch

    nlp = _pipeline(tiny_qa_encoder)
    model = nlp.get_pipe("transformer").model
    _without_dropout(model.transformer)
    docs = [nlp.make_doc(t) for t in TEXTS]
    fp32_hidden, fp32_grads = _training_pass(model, docs, d_seed=1)
    monkeypatch.setattr(precision, "native_bfloat16", lambda device: False)
    monkeypatch.setattr(precision, "_warned_devices", set())
    model.attrs["train_precision"] = "bfloat16"
    with pytest.warns(UserWarning, match="no native bfloat16"):
        hidden, grads = _training_pass(model, docs, d_seed=1)
    assert all(torch.equal(a, b) for a, b in zip(hidden, fp32_hidden))
    assert all(torch.equal(grads[name], grad) for name, grad in fp32_grads.items())


@needs_native_bf16
def test_pair_encoder_trains_in_bfloat16_and_predicts_in_float32(tiny_qa_encoder):
    import torch

    pairs = [("Which gene causes cancer ?", "Germline mutations in BRCA1 cause hereditary breast cancer ."),
             ("Is BRCA1 a gene ?", "BRCA1 is a gene .")]
    model = PairEncoder(str(tiny_qa_encoder), window=24, stride=6, train_precision="bfloat16")
    model.initialize()
    torch_model = model.layers[0].shims[0]._model
    _without_dropout(torch_model)
    results = {}
    for setting in ("bfloat16", "float32"):
        model.attrs["train_precision"] = setting
        torch_model.zero_grad()
        output, backprop = model.begin_update(pairs)
        d_hidden = numpy.random.default_rng(0).normal(size=output.hidden.shape).astype("float32")
        backprop(d_hidden * output.attention_mask[..., None])
        results[setting] = {"hidden": output.hidden, "predicted": model.predict(pairs).hidden,
                            "grads": {n: p.grad.detach().clone() for n, p in torch_model.named_parameters() if p.grad is not None}}
    fp32, bf16 = results["float32"], results["bfloat16"]
    assert bf16["hidden"].dtype == numpy.float32 and not numpy.array_equal(bf16["hidden"], fp32["hidden"])
    assert numpy.abs(bf16["hidden"] - fp32["hidden"]).max() <= 0.05 * numpy.abs(fp32["hidden"]).max()
    assert numpy.array_equal(bf16["predicted"], fp32["predicted"])
    assert sorted(bf16["grads"]) == sorted(fp32["grads"]) and len(fp32["grads"]) > 10
    for name, grad in fp32["grads"].items():
        if float(grad.abs().max()) > 1e-3:
            assert float(torch.nn.functional.cosine_similarity(bf16["grads"][name].flatten(), grad.flatten(), dim=0)) > 0.99
