"""share_encoder: task configs on another pipeline's frozen encoder, and the one-encoder release."""

import pytest
from spacy.util import load_config

from spacy_biolm.testing import REPO, RELEASE_SENTENCE, make_tiny_one_encoder_release, make_tiny_per_task_release
from spacy_biolm.training.shared_encoder import ADAPTER, LISTENER, STANDARDIZED, pipeline_encoders, share_encoder

CONFIGS = REPO / "configs"


@pytest.mark.parametrize("name,component", [("ner.cfg", "ner"), ("hoc.cfg", "textcat_multilabel"),
                                            ("relations_fast.cfg", "relation_extractor")])
def test_share_encoder_sources_freezes_and_annotates(name, component):
    config = load_config(CONFIGS / name, interpolate=False)
    shared = share_encoder(config, "training/ner/model-best")
    assert dict(shared["components"]["transformer"]) == {"source": "training/ner/model-best"}
    assert "transformer" in shared["training"]["frozen_components"]
    assert "transformer" in shared["training"]["annotating_components"]
    standardized = shared["components"][component]["model"]["tok2vec"]
    assert standardized["@architectures"] == STANDARDIZED
    listener = standardized["tok2vec"]
    assert listener["@architectures"] == LISTENER and listener["grad_factor"] == 0.0
    # the input is left as it was
    assert "factory" in config["components"]["transformer"]
    assert config["training"]["frozen_components"] == []


def test_share_encoder_adapter_follows_the_listener():
    shared = share_encoder(load_config(CONFIGS / "ner.cfg", interpolate=False), "src", adapter_depth=2, adapter_width=384)
    tok2vec = shared["components"]["ner"]["model"]["tok2vec"]
    assert tok2vec["@layers"] == "chain.v1"
    assert tok2vec["*"]["listener"]["@architectures"] == STANDARDIZED
    assert tok2vec["*"]["listener"]["tok2vec"]["@architectures"] == LISTENER
    assert tok2vec["*"]["adapter"] == {"@architectures": ADAPTER, "width": 384, "window_size": 1,
                                       "maxout_pieces": 3, "depth": 2}


@pytest.mark.parametrize("name,kwargs,message", [
    ("ner_cnn.cfg", {}, "no [components.transformer]"),
    ("hoc_bow.cfg", {}, "no [components.transformer]"),
    ("ner.cfg", {"adapter_depth": 1}, "adapter_width"),
    ("ner.cfg", {"adapter_depth": -1}, "adapter_depth"),
])
def test_share_encoder_rejects(name, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[")):
        share_encoder(load_config(CONFIGS / name, interpolate=False), "src", **kwargs)


def test_share_encoder_without_listeners():
    config = load_config(CONFIGS / "ner.cfg", interpolate=False)
    config["components"]["ner"]["model"]["tok2vec"] = {"@architectures": "spacy.HashEmbedCNN.v2"}
    with pytest.raises(ValueError, match="listens"):
        share_encoder(config, "src")


def _gene_docbin(nlp, path):
    from spacy.tokens import DocBin

    docs = []
    for gene in ("BRCA1", "BRCA2", "TP53", "APC"):
        doc = nlp.make_doc(RELEASE_SENTENCE.replace("BRCA1", gene))
        doc.ents = [doc.char_span(22, 22 + len(gene), "GENE")]
        docs.append(doc)
    DocBin(docs=docs).to_disk(path)
    return path


def test_heads_train_on_the_frozen_encoder_and_assemble_into_one(tiny_release, tmp_path):
    """ner_gene trained by `spacy train` on the tiny release's disease encoder leaves that encoder
    unchanged; the one-encoder release built from it, hallmarks and the fast relation extractor
    runs one encoder and gives the task pipelines' own predictions."""
    import numpy
    import spacy
    from spacy.cli.train import train

    source = tiny_release.parent / "ner"
    nlp_source = spacy.load(source)
    shared_config = tmp_path / "ner_gene.cfg"
    share_encoder(load_config(CONFIGS / "ner.cfg", interpolate=False), source).to_disk(shared_config)
    corpus = _gene_docbin(nlp_source, tmp_path / "genes.spacy")
    train(shared_config, tmp_path / "ner_gene", overrides={
        "paths.train": str(corpus), "paths.dev": str(corpus), "training.max_steps": 4, "training.eval_frequency": 2,
        "training.logger.progress_bar": False})
    ner_gene = spacy.load(tmp_path / "ner_gene" / "model-last")
    before = nlp_source.get_pipe("transformer").model.transformer.state_dict()
    after = ner_gene.get_pipe("transformer").model.transformer.state_dict()
    assert all(numpy.array_equal(before[k].numpy(), after[k].numpy()) for k in before), "the shared encoder was updated"

    release = spacy.load(make_tiny_one_encoder_release(tiny_release, tmp_path / "one",
                                                       trained={"ner_gene": tmp_path / "ner_gene" / "model-last"}))
    assert len(pipeline_encoders(release)) == 1
    assert len(pipeline_encoders(spacy.load(make_tiny_per_task_release(tiny_release)))) > 1  # an encoder per task
    listeners = release.get_pipe("transformer").listening_components
    assert {"ner", "ner_gene", "relation_extractor", "hallmarks"} <= set(listeners)
    with release.select_pipes(enable=["transformer", "ner_gene"]):  # without the disease entities before it
        genes = release(RELEASE_SENTENCE)
    alone = ner_gene(RELEASE_SENTENCE)
    assert alone.ents and [(e.start, e.end, e.label_) for e in genes.ents] == [(e.start, e.end, e.label_) for e in alone.ents]
    hoc = spacy.load(tmp_path / "one" / "hoc")(RELEASE_SENTENCE)
    assert release(RELEASE_SENTENCE).cats == pytest.approx(hoc.cats, abs=1e-5)
