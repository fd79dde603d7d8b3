"""Every spaCy training config in configs/ passes ``spacy debug config`` (its corpora pointed at
a small DocBin: the shipped paths name project outputs that a checkout does not have)."""

from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin
from spacy.util import load_config

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"

# Not spaCy training configs: pretrain_*.cfg are `spacy-biolm pretrain` settings, tune_*.cfg a
# hyperopt search space, release*.cfg the `spacy assemble` recipes of
# trained pipelines. release_multitask.cfg trains (spacy_biolm/tests/test_multitask_release.py trains it
# from its four task corpora).
NOT_TRAINING = ("pretrain_*.cfg", "tune_*.cfg", "release.cfg", "release_per_task.cfg", "release_one_encoder.cfg")
MULTITASK = "release_multitask.cfg"


def training_configs():
    skipped = {path for pattern in NOT_TRAINING for path in CONFIGS.glob(pattern)}
    return sorted(path for path in CONFIGS.glob("*.cfg") if path not in skipped)


def test_the_split_between_training_and_other_configs_is_known():
    names = {path.name for path in training_configs()}
    assert {"relations_fast.cfg", "relations_anonymised.cfg", "yes_no.cfg", "answer_span.cfg", "answer_reranker.cfg",
            "ner.cfg"} <= names
    for path in training_configs():
        assert "training" in load_config(path, interpolate=False), path


@pytest.mark.parametrize("path", training_configs(), ids=lambda p: p.name)
def test_config_passes_spacy_debug_config(path, tmp_path):
    from spacy.cli.debug_config import debug_config

    docbin = tmp_path / "one.spacy"
    DocBin(docs=[spacy.blank("en")("BRCA1 causes cancer .")], store_user_data=True).to_disk(docbin)
    paths = load_config(path, interpolate=False).get("paths", {})
    overrides = {f"paths.{key}": str(docbin) for key, value in paths.items()
                 if isinstance(value, str) and value.endswith(".spacy")}
    if "corpus_dir" in paths:
        overrides["paths.corpus_dir"] = str(_entity_type_corpora(path, tmp_path / "corpora"))
    debug_config(path, overrides=overrides)


def _entity_type_corpora(path, directory: Path) -> Path:
    """``directory/<corpus>/{train,devel}.spacy`` for every corpus a ``spacy-biolm.EntityTypeCorpora.v1``
    reader of the config names (configs/ner_types_cnn.cfg): README's example text with the entities of
    the types each corpus annotates, as `data convert-splits --corpus NAME` writes them."""
    from spacy_biolm.corpora.entity_types import annotated_types
    from spacy_biolm.doc_data import set_annotated_entity_types
    from spacy_biolm.release_meta.sample import SAMPLE_TEXT

    nlp = spacy.blank("en")
    found = {"BRCA1": "GENE", "hereditary breast cancer": "DISEASE", "Tamoxifen": "CHEMICAL", "MCF-7 cells": "CELL",
             "mice": "SPECIES"}
    readers = load_config(path, interpolate=False)["corpora"]
    for corpus in {name for reader in readers.values() for name in reader.get("corpora", [])}:
        types = annotated_types(corpus)
        doc = nlp.make_doc(SAMPLE_TEXT)
        doc.ents = [doc.char_span(SAMPLE_TEXT.index(text), SAMPLE_TEXT.index(text) + len(text), label)
                    for text, label in found.items() if label in types]
        set_annotated_entity_types(doc, types)
        for split in ("train", "devel"):
            (directory / corpus).mkdir(parents=True, exist_ok=True)
            DocBin(docs=[doc], store_user_data=True).to_disk(directory / corpus / f"{split}.spacy")
    return directory


def _task_docs(nlp, config_name: str) -> list:
    """Gold Docs of README's example sentence in the form the config's reader expects (a DocBin
    of them is what the project's converters write for that task)."""
    from spacy_biolm.doc_data import make_question_doc
    from spacy_biolm.doc_data.relations import Relation, set_relations
    from spacy_biolm.pipes.answer_reranker.scorer import GOLD_KEY
    from spacy_biolm.testing import RELEASE_SENTENCE

    gene, disease = (22, 27), (34, 58)
    if config_name.startswith(("ner", "relations")):
        doc = nlp.make_doc(RELEASE_SENTENCE)
        if config_name.startswith("ner"):
            doc.ents = [doc.char_span(*disease, "DISEASE")]
            return [doc]
        head, tail = doc.char_span(*gene, "GENE"), doc.char_span(*disease, "DISEASE")
        doc.ents = [head, tail]
        negative = doc.copy()
        set_relations(doc, [Relation(head, tail, "ASSOCIATION", 1.0)])
        return [doc, negative]
    if config_name.startswith("hoc"):
        from spacy_biolm.corpora.hoc import HALLMARKS

        docs = []
        for positive in (0, 1):
            doc = nlp.make_doc(RELEASE_SENTENCE)
            doc.cats = {h: float(i == positive) for i, h in enumerate(HALLMARKS)}
            docs.append(doc)
        return docs
    docs = []
    for answer in ("yes", "no"):
        doc = make_question_doc(nlp, "Which gene is mutated?", [RELEASE_SENTENCE, "Nothing else is known."], f"q{answer}")
        doc.cats = {"yes": float(answer == "yes"), "no": float(answer == "no")}
        doc.spans["answers"] = [doc.char_span(*gene)]
        doc.spans[GOLD_KEY] = [next(iter(doc.sents))]
        docs.append(doc)
    return docs


@pytest.fixture(scope="module")
def config_encoder(tmp_path_factory):
    from spacy_biolm.testing import RELATION_SENTENCES, RELEASE_SENTENCE, make_tiny_encoder

    words = list(RELATION_SENTENCES) + [RELEASE_SENTENCE.replace(".", " ."), "Which gene is mutated ?"]
    return make_tiny_encoder(tmp_path_factory.mktemp("config_encoder"), vocab_sentences=words * 20, vocab_size=150,
                             layers=1, max_positions=256)


@pytest.mark.parametrize("path", [p for p in training_configs() if p.name != MULTITASK], ids=lambda p: p.name)
def test_config_trains_as_it_is_with_only_its_data_encoder_and_budget_given(path, tmp_path, config_encoder):
    # README's "Retrain a component on your own corpus": `python -m spacy train configs/X.cfg
    # --paths.train ... --paths.dev ...` (+ --paths.encoder for another encoder). Nothing else of
    # the recipe's overrides is needed for the config to train, save and reload.
    from spacy.cli.train import train

    nlp = spacy.blank("en")
    docs = _task_docs(nlp, path.name)
    for split in ("train", "dev"):
        DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / f"{split}.spacy")
    overrides = {"paths.train": str(tmp_path / "train.spacy"), "paths.dev": str(tmp_path / "dev.spacy"),
                 "training.max_steps": 2, "training.eval_frequency": 1}
    if "encoder" in load_config(path, interpolate=False)["paths"]:
        overrides["paths.encoder"] = str(config_encoder)
    if "corpus_dir" in load_config(path, interpolate=False)["paths"]:  # several corpora by name (ner_types_cnn.cfg)
        overrides = {"paths.corpus_dir": str(_entity_type_corpora(path, tmp_path / "corpora")),
                     "training.max_steps": 2, "training.eval_frequency": 1}
    train(path, tmp_path / "out", overrides=overrides)
    trained = spacy.load(tmp_path / "out" / "model-last")
    assert trained.pipe_names == load_config(path, interpolate=False)["nlp"]["pipeline"]


def test_transformer_configs_default_to_the_encoders_all_exports():
    # `all` exports pretrained/encoder/model (token tasks) and pretrained/sentence_encoder/model (pooled
    # tasks, and the multi-task release, whose one encoder must serve the hallmarks too).
    defaults = {path.name: load_config(path, interpolate=False)["paths"].get("encoder") for path in training_configs()}
    pooled = {"hoc.cfg", "answer_reranker.cfg", MULTITASK}
    for name, encoder in defaults.items():
        if encoder is not None:
            expected = "pretrained/sentence_encoder/model" if name in pooled else "pretrained/encoder/model"
            assert encoder == expected, f"{name}: paths.encoder {encoder!r}, `all` exports {expected}"
