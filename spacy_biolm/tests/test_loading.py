"""The one pipeline loader: threads, and encoders quantised to int8 at load."""

import pytest


@pytest.fixture(scope="module")
def saved_ner(tmp_path_factory, tiny_encoder):
    import spacy
    from spacy.training import Example

    from spacy_biolm.testing import REPO, disease_sentences, overfit

    config = spacy.util.load_config(REPO / "configs" / "ner.cfg", overrides={"paths.encoder": str(tiny_encoder)},
                                    interpolate=True)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    examples = []
    for words, spans in disease_sentences(8, seed=1):
        doc = spacy.tokens.Doc(nlp.vocab, words=words)
        doc.ents = [spacy.tokens.Span(doc, start, end, label="Disease") for start, end in spans]
        examples.append(Example(nlp.make_doc(doc.text), doc))
    overfit(nlp, examples, steps=15, learn_rate=0.005)
    path = tmp_path_factory.mktemp("ner") / "pipeline"
    nlp.to_disk(path)
    return path, [eg.reference for eg in examples]


def test_int8_quantises_every_linear_of_the_encoder_and_keeps_the_entities(saved_ner, tmp_path):
    import torch

    from spacy_biolm.loading import load_pipeline
    from spacy_biolm.training.shared_encoder import pipeline_encoders

    path, gold = saved_ner
    full, int8 = load_pipeline(path, threads=1), load_pipeline(path, threads=1, int8=True)
    assert torch.get_num_threads() == 1
    (encoder,) = pipeline_encoders(int8)
    quantised = torch.ao.nn.quantized.dynamic.Linear
    assert any(isinstance(m, quantised) for m in encoder.modules())
    assert not any(isinstance(m, torch.nn.Linear) for m in encoder.modules())
    assert int8.meta["int8_encoders"] == 1
    assert not any(isinstance(m, quantised) for m in pipeline_encoders(full)[0].modules())
    texts = [doc.text for doc in gold]
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
