"""The one pipeline loader: threads, and encoders quantised to int8 at load."""

import pytest


def _disease_texts():
    from spacy_biolm.testing import disease_sentences

    return [" ".join(words) for words, _ in disease_sentences(8, seed=1)]  # ner_pipeline_dir's training text


def test_int8_quantises_every_linear_of_the_encoder_and_keeps_the_entities(ner_pipeline_dir, tmp_path):
    import torch

    from spacy_biolm.loading import load_pipeline
    from spacy_biolm.training.shared_encoder import pipeline_encoders

    full, int8 = load_pipeline(ner_pipeline_dir, threads=1), load_pipeline(ner_pipeline_dir, threads=1, int8=True)
    assert torch.get_num_threads() == 1
    (encoder,) = pipeline_encoders(int8)
    quantised = torch.ao.nn.quantized.dynamic.Linear
    assert any(isinstance(m, quantised) for m in encoder.modules())
    assert not any(isinstance(m, torch.nn.Linear) for m in encoder.modules())
    assert int8.meta["int8_encoders"] == 1
    assert not any(isinstance(m, quantised) for m in pipeline_encoders(full)[0].modules())
    texts = _disease_texts()
    ents = lambda nlp: [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in nlp.pipe(texts)]
    expected = ents(full)
    assert sum(map(len, expected)) > 0
    same = sum(a == b for a, b in zip(ents(int8), expected))
    assert same >= len(texts) - 1, "int8 changed the entities of more than one sentence"
    with pytest.raises(ValueError, match="quantised to int8 at load"):
        int8.to_disk(tmp_path / "copy")


def test_int8_is_refused_on_a_gpu_and_for_a_pipeline_without_an_encoder(tmp_path):
    import spacy

    from spacy_biolm.loading import load_pipeline

    with pytest.raises(ValueError, match="CPU only"):
        load_pipeline("any", gpu_id=0, int8=True)
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ValueError, match="no HF encoder"):
        load_pipeline(tmp_path / "blank", int8=True)
    assert load_pipeline(tmp_path / "blank").pipe_names == []
