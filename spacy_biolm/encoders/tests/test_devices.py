"""Encoder inputs land on the device of the encoder's parameters: on the CPU here, and on the GPU
when spaCy runs on one (the same tests run there when CuPy sees a GPU)."""

import pytest

from spacy_biolm.encoders import PairClassifier, PairEncoder
from spacy_biolm.encoders.devices import module_device, tensors_for
from spacy_biolm.testing import device_params, record_input_devices

DEVICES = device_params()


@pytest.mark.parametrize("device", DEVICES, indirect=True)
def test_pair_and_single_text_inputs_share_the_device_of_the_parameters(device, tiny_qa_encoder):
    classifier = PairClassifier(PairEncoder(str(tiny_qa_encoder), window=24, stride=6), n_labels=2)
    classifier.initialize()
    hf_model = classifier.layers[0].layers[0].shims[0]._model
    parameters = module_device(hf_model)
    assert parameters.type == ("cuda" if device == "gpu" else "cpu")
    seen = record_input_devices(hf_model)
    logits, backprop = classifier.begin_update([("Is BRCA1 a gene ?", "BRCA1 is a gene ."), ("Is it ?", "")])
    backprop(classifier.ops.alloc2f(*logits.shape))
    classifier.predict(["BRCA1 causes breast cancer .", "TP53 is a tumour suppressor ."])
    assert seen == [parameters, parameters]


def test_tensors_follow_a_module_wherever_it_is():
    import torch

    module = torch.nn.Linear(2, 2)
    (ids,) = tensors_for(module, {"input_ids": [[1, 2]]}).values()
    assert ids.device == next(module.parameters()).device and ids.tolist() == [[1, 2]]
    if torch.cuda.is_available():
        module.to("cuda")
        assert tensors_for(module, {"x": [[1]]})["x"].device.type == "cuda"
