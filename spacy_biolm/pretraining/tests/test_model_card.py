"""The released encoder's card: generated from its run's summary and the ablation, licences only
for text whose SHA-1 is the one the run read; provenance reads the summary inside released/<name>/."""

import hashlib
import json
import lzma

import pytest

from spacy_biolm.evaluation.encoder_choice import ablation_table, mean_dev
from spacy_biolm.pretraining.model_card import model_card as _model_card
from spacy_biolm.pretraining.model_card import write_model_card as _write_model_card
from spacy_biolm.pretraining.provenance import describe_encoder, encoder_provenance
from spacy_biolm.pretraining.sources import recorded_licences


def model_card(*args, **kwargs):
    return _model_card(*args, ablation_table=ablation_table, mean_dev=mean_dev, **kwargs)


def write_model_card(*args, **kwargs):
    return _write_model_card(*args, ablation_table=ablation_table, mean_dev=mean_dev, **kwargs)


def _released(tmp_path, text_bytes):
    released = tmp_path / "released" / "bio_encoder"
    released.mkdir(parents=True)
    summary = {
        "architecture": "electra", "continued_from": "some_checkpoint", "steps": 4000, "processes": 1,
        "seconds_this_run": 442.2, "device": "cuda", "n_sequences": 1000, "corpus_tokens": 120000,
        "encoder_parameters": 22713601, "tokens_per_second": 120833.3, "model_flops_utilization": 0.0085,
        "sources": [{"name": "a.txt.xz", "path": "elsewhere/a.txt.xz", "sha1": hashlib.sha1(text_bytes).hexdigest()}],
    }
    settings = {"training": {"batch_size": 128, "grad_accumulation": 1, "learning_rate": 1e-4, "warmup_fraction": 0.06,
                             "bf16": True},
                "corpus": {"max_seq_length": 128}}
    config = {"num_hidden_layers": 6, "hidden_size": 384, "num_attention_heads": 12, "vocab_size": 30522,
              "torch_dtype": "float16"}
    for name, data in (("pretrain_summary.json", summary), ("pretraining_settings.json", settings), ("config.json", config)):
        (released / name).write_text(json.dumps(data), encoding="utf8")
    (released / "heldout_log.jsonl").write_text("\n".join(json.dumps(
        {"step": step, "disc_loss": loss, "disc_acc": 0.95, "disc_recall": 0.7, "gen_loss": 5.9})
        for step, loss in ((0, 0.6921), (4000, 0.1157))) + "\n", encoding="utf8")
    return released


def _corpus(tmp_path, text_bytes):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt.xz").write_bytes(text_bytes)
    with lzma.open(corpus / "documents.tsv.xz", "wt", encoding="utf8") as f:
        f.write("id\tfile\tlicence\n1\ta.txt.xz\tcc-by-4.0\n2\ta.txt.xz\tcc-by-4.0\n3\ta.txt.xz\tcc-zero-1.0\n")
    return corpus


def _ablation():
    def task(dev_values):
        return {"test": {"mean": 0.8, "std": 0.01}, "dev": {"mean": sum(dev_values) / 3, "std": 0.0, "values": dev_values},
                "fine_tuning_seconds": 60.0}

    return {"seeds": [0, 1, 2], "tasks": {"ncbi": {"title": "NCBI-disease F1"}},
            "encoders": {"reference": {"pretraining": {}, "tasks": {"ncbi": task([0.70, 0.70, 0.70])}},
                         "bio": {"pretraining": {"heldout": {"disc_loss": 0.1157, "gen_loss": 5.9}, "seconds": 442.2},
                                 "tasks": {"ncbi": task([0.80, 0.82, 0.84])}}},
            "reference": "reference", "chosen": "bio"}


def test_the_card_quotes_the_run_and_the_ablation(tmp_path):
    text = lzma.compress(b"Some sentence.\n")
    released = _released(tmp_path, text)
    card = model_card(released, _ablation(), "bio", "results/encoders_gpu.json", "one test GPU", _corpus(tmp_path, text))
    assert "(6 layers, hidden 384, 12 heads, vocabulary 30,522; 22,713,601 parameters), stored as float16" in card
    assert "Continued from the published checkpoint `some_checkpoint`" in card
    # 4,000 steps x 128 sequences over 1,000 packed sequences
    assert "Steps: 4,000 of 128 sequences of up to 128 WordPieces (512,000 sequences" in card
    assert "about 512.0 passes" in card
    assert "Hardware: one test GPU (cuda, 1 process(es)); 442 s of training at 120,833 WordPieces/s, model FLOPs utilisation 0.85%." in card
    assert "| a.txt.xz | `" in card and "| cc-by-4.0 2, cc-zero-1.0 1 |" in card
    assert "| 0 | 0.6921 |" in card and "| 4,000 | 0.1157 |" in card
    assert "mean dev 82.00, seed std 2.00). It is the ablation's chosen encoder (reference: `reference`)." in card
    assert "| **bio** (chosen) |" in card


def test_licences_come_only_from_the_same_file(tmp_path):
    text = lzma.compress(b"Some sentence.\n")
    released = _released(tmp_path, text)
    corpus = _corpus(tmp_path, lzma.compress(b"Another text.\n"))  # same name, other bytes
    summary = json.loads((released / "pretrain_summary.json").read_text(encoding="utf8"))
    assert recorded_licences(summary["sources"], corpus)[0]["licences"] == {}
    assert recorded_licences(summary["sources"])[0]["licences"] == {}
    summary["sources"][0]["licences"] = {"public-domain": 4}  # recorded by the run: kept
    assert recorded_licences(summary["sources"], corpus)[0]["licences"] == {"public-domain": 4}


def test_the_card_is_written_and_refuses_an_encoder_the_ablation_lacks(tmp_path):
    text = lzma.compress(b"Some sentence.\n")
    released = _released(tmp_path, text)
    ablation = tmp_path / "encoders.json"
    ablation.write_text(json.dumps(_ablation()), encoding="utf8")
    path = write_model_card(released, ablation, "bio", "one test GPU", notes="A note.")
    assert path == released / "MODEL_CARD.md"
    assert path.read_text(encoding="utf8").endswith("## Notes\n\nA note.\n")
    assert json.loads((released / "ablation.json").read_text(encoding="utf8")) == {"ablation": str(ablation), "name": "bio"}
    with pytest.raises(KeyError, match="has no encoder 'other'"):
        write_model_card(released, ablation, "other", "one test GPU")
    (released / "pretrain_summary.json").unlink()
    with pytest.raises(FileNotFoundError, match="pretrain_summary.json missing"):
        write_model_card(released, ablation, "bio", "one test GPU")


def test_provenance_reads_the_summary_inside_a_released_encoder(tmp_path):
    released = _released(tmp_path, lzma.compress(b"Some sentence.\n"))
    exported = tmp_path / "encoder"
    exported.mkdir()
    (exported / "config.json").write_text("{}", encoding="utf8")
    (exported / "encoder_source.json").write_text(json.dumps({"init": "released/bio_encoder", "path": str(released)}),
                                                  encoding="utf8")
    provenance = encoder_provenance(exported)
    assert provenance["pretraining"]["steps"] == 4000
    assert provenance["pretraining"]["batch_size"] == 128
    assert describe_encoder(provenance).startswith("some_checkpoint continued with 4000 steps of ELECTRA replaced-token detection")
