"""The one set of pytest fixtures for both test paths (``spacy_biolm/`` and ``tests/``).

The builders behind them are in :mod:`spacy_biolm.testing` (importable without pytest). Every
fixture that makes a model or a vocabulary is session-scoped and lazy: a test run pays only for
what its tests use.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the tests never download; set before transformers loads

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from spacy_biolm.testing import (  # noqa: E402
    MICRO_PRETRAINING_CONFIG,
    RELATION_SENTENCES,
    disease_sentences,
    make_tiny_encoder,
    make_tiny_release,
    write_bio_text,
)


def pytest_collection_modifyitems(config, items):
    """Run the tests marked ``slow`` first. Under ``pytest -n 2`` xdist deals the first tests out
    to the workers in turn, so each slow test starts at once on its own worker and the quick ones
    fill in around it; collected last, the end-to-end run started after them and ran alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(scope="session")
def tiny_qa_encoder(tmp_path_factory) -> Path:
    """A tiny random ELECTRA with a fixed small cased WordPiece vocabulary (the QA and encoder tests)."""
    return make_tiny_encoder(tmp_path_factory.mktemp("qa_encoder"))


@pytest.fixture(scope="session")
def relation_encoder(tmp_path_factory) -> Path:
    """A one-layer random ELECTRA whose domain vocabulary is trained on sentences with the relation
    placeholders (``@GENE$``, ``@DISEASE$``, ``BC6ENTC``, ...), so they tokenise without [UNK]."""
    return make_tiny_encoder(tmp_path_factory.mktemp("re_encoder"), vocab_sentences=RELATION_SENTENCES * 20,
                             vocab_size=120, layers=1, max_positions=256)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> Path:
    """A random ELECTRA discriminator with a domain vocabulary trained on disease sentences, as
    the pretraining step exports it (no pretraining: the tests need the format, not the quality)."""
    sentences = [" ".join(words) for words, _ in disease_sentences(200)]
    return make_tiny_encoder(tmp_path_factory.mktemp("encoder"), vocab_sentences=sentences, vocab_size=150)


@pytest.fixture(scope="session")
def bio_text(tmp_path_factory) -> Path:
    """A small biomedical text in the pretraining format."""
    return write_bio_text(tmp_path_factory.mktemp("text") / "text.txt")


@pytest.fixture(scope="session")
def vocab_dir(tmp_path_factory, bio_text) -> Path:
    """A 200-piece domain vocabulary trained on :func:`bio_text`."""
    from spacy_biolm.pretraining.vocab import train_vocab

    out = tmp_path_factory.mktemp("vocab")
    train_vocab([bio_text], out, vocab_size=200)
    return out


@pytest.fixture
def micro_config(tmp_path, bio_text, vocab_dir) -> Path:
    """A pretraining config on :func:`bio_text` and :func:`vocab_dir` that trains in a second."""
    path = tmp_path / "micro.cfg"
    path.write_text(MICRO_PRETRAINING_CONFIG.format(text=bio_text, vocab=vocab_dir), encoding="utf8")
    return path


@pytest.fixture
def device(request):
    """spaCy on ``request.param`` ("cpu" or "gpu", see ``spacy_biolm.testing.device_params``),
    back on the CPU afterwards."""
    import spacy

    if request.param == "gpu":
        spacy.require_gpu()
    else:
        spacy.require_cpu()
    yield request.param
    spacy.require_cpu()


@pytest.fixture(scope="session")
def tiny_release(tmp_path_factory) -> Path:
    """The release pipeline assembled from configs/release.cfg out of tiny untrained task pipelines
    (every release component, the QA pipes disabled); the task pipelines lie beside it (~15 s)."""
    return make_tiny_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="session")
def ner_pipeline_dir(tmp_path_factory, tiny_encoder) -> Path:
    """configs/ner.cfg on the tiny encoder, briefly trained on disease sentences (so it finds
    entities), with a sentencizer, saved to a folder as a user's pipeline is."""
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
    nlp.add_pipe("sentencizer", first=True)
    out = tmp_path_factory.mktemp("annotate_pipeline") / "pipeline"
    nlp.to_disk(out)
    return out
