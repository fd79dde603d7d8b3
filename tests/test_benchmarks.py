"""The benchmark scripts run end to end on micro inputs and write the result schema the notes
and README quote (numbers from such tiny runs mean nothing; the shape of the output does)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spacy_biolm.testing import (
    MICRO_PRETRAINING_CONFIG,
    REPO,
    disease_sentences,
    make_tiny_encoder,
    write_bio_text,
    write_conll,
)


def _micro_inputs(tmp_path: Path):
    from spacy_biolm.pretraining.vocab import train_vocab

    text = write_bio_text(tmp_path / "text.txt", n_docs=60)
    vocab = tmp_path / "vocab"
    train_vocab([text], vocab, vocab_size=200)
    config = tmp_path / "micro.cfg"
    config.write_text(MICRO_PRETRAINING_CONFIG.format(text=text, vocab=vocab), encoding="utf8")
    return config, text, vocab


def test_pretrain_throughput_compares_ours_with_the_reference_loop(tmp_path):
    config, text, vocab = _micro_inputs(tmp_path)
    output = tmp_path / "throughput.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "pretrain_throughput.py"), "--config", str(config),
           "--text", str(text), "--vocab", str(vocab), "--steps", "4", "--warmup-steps", "1",
           "--memory-steps", "1", "--device", "cpu", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert set(report["sides"]) == {"ours", "reference"}
    for side in report["sides"].values():
        assert side["tokens_per_second"] > 0 and side["peak_memory_mib"] >= side["step_memory_mib"] >= 0
        assert len(side["losses"]) == 5  # warm-up + timed steps
    # Same initial weights and the same first batch: the first losses agree up to masking noise.
    first = [side["losses"][0] for side in report["sides"].values()]
    assert abs(first[0] - first[1]) / first[1] < 0.1
    ratio = report["sides"]["ours"]["tokens_per_second"] / report["sides"]["reference"]["tokens_per_second"]
    assert abs(report["speedup_tokens_per_second"] - ratio) < 1e-2
    assert output.with_suffix(".png").stat().st_size > 1000


def test_pretrain_memory_runs_a_corpus_and_its_tenfold(tmp_path):
    config, text, vocab = _micro_inputs(tmp_path)
    output = tmp_path / "memory.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "pretrain_memory.py"), "--config", str(config), "--text",
           str(text), "--vocab", str(vocab), "--steps", "2", "--factor", "3", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["corpus_ratio"] >= 2.9  # three copies (a document may pack differently at a seam)
    assert report["runs"]["3x"]["sequences"] >= 3 * report["runs"]["1x"]["sequences"] - 3
    assert report["peak_rss_ratio"] == round(
        report["runs"]["3x"]["peak_rss_mib"] / report["runs"]["1x"]["peak_rss_mib"], 3
    )


def test_inference_benchmark_reports_speed_memory_and_ratios(tmp_path):
    from spacy_biolm.corpora.conll import convert_ner

    encoder = make_tiny_encoder(tmp_path / "encoder")
    docs = tmp_path / "ner.spacy"
    convert_ner(write_conll(tmp_path / "ner.tsv", disease_sentences(40, seed=3)), docs)
    output = tmp_path / "inference.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "inference.py"), "--encoder", str(encoder), "--train", str(docs),
           "--texts", str(docs), "--n-docs", "30", "--threads", "1", "--repeats", "2", "--big-layers", "2",
           "--big-hidden", "64", "--big-heads", "2", "--big-ffn", "128", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    configs = report["configs"]
    assert set(configs) == {"pipeline", "pipeline_stock", "raw_forward", "raw_forward_stock", "raw_tokenize",
                            "bert_base_pipeline"}
    assert report["docs"] == 30 and report["words"] > 30 * 5 and report["torch_threads"] == 1
    for name, config in configs.items():
        assert config["seconds"] > 0
        assert abs(config["words_per_second"] - report["words"] / config["seconds"]) <= 0.1 + 1e-3 * config["words_per_second"]
    for name in ("pipeline", "pipeline_stock", "raw_forward", "bert_base_pipeline"):
        assert configs[name]["peak_rss_mib"] >= configs[name]["loaded_rss_mib"] > 50
    # Each ratio is the quotient of the speeds it names (up to rounding).
    speed = {name: config["words_per_second"] for name, config in configs.items()}
    ratios = report["ratios"]
    assert abs(ratios["pipeline_over_raw_forward"] - speed["pipeline"] / speed["raw_forward"]) < 0.01
    assert abs(ratios["small_over_bert_base_pipeline"] - speed["pipeline"] / speed["bert_base_pipeline"]) < 0.01
    assert abs(ratios["pipeline_over_pipeline_stock"] - speed["pipeline"] / speed["pipeline_stock"]) < 0.01
    assert report["targets"]["pipeline_over_raw_forward"]["met"] == (ratios["pipeline_over_raw_forward"] >= 0.85)
    cpu = {name: configs[name]["cpu_seconds"] for name in ("pipeline", "pipeline_stock", "raw_forward")}
    assert all(value > 0 for value in cpu.values())
    assert abs(report["ratios_cpu"]["pipeline_over_raw_forward"] - cpu["raw_forward"] / cpu["pipeline"]) < 0.01
    # The length-sorted batches pad less than the stock ones, over the same real wordpieces.
    ours, stock = configs["pipeline"], configs["pipeline_stock"]
    assert ours["real_wordpieces"] == stock["real_wordpieces"] > 0
    assert ours["padded_wordpieces"] <= stock["padded_wordpieces"]
    assert set(ours["stage_seconds"]) == {"tokenizer", "transformer", "ner"}
    assert report["encoders"]["bert_base_sized"]["layers"] == 2 and report["encoders"]["bert_base_sized"]["hidden"] == 64
    assert report["same_entities_sorted_vs_stock"] is True
    assert report["n_process"]["n_process"] == 2 and report["n_process"]["same_entities_as_n_process_1"] is True
    assert {"torch", "spacy", "spacy-transformers"} <= set(report["versions"])
    assert output.with_suffix(".png").stat().st_size > 1000


def test_finetune_memory_benchmark_trains_with_and_without_the_trim_callback(tmp_path):
    from spacy_biolm.corpora.conll import convert_ner

    encoder = make_tiny_encoder(tmp_path / "encoder")
    docs = tmp_path / "ner.spacy"
    convert_ner(write_conll(tmp_path / "ner.tsv", disease_sentences(40, seed=5)), docs)
    output = tmp_path / "finetune_memory.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "finetune_memory.py"), "--encoder", str(encoder), "--train",
           str(docs), "--dev", str(docs), "--dev-limit", "5", "--steps", "4", "--eval-frequency", "2",
           "--interval", "2", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    trimmed, plain = report["runs"]["trim_memory every 2 updates"], report["runs"]["no callback"]
    assert report["interval"] == 2
    assert trimmed["before_update"] == "spacy-biolm.trim_memory.v1" and plain["before_update"] is None
    for run in (trimmed, plain):
        assert run["peak_rss_mib"] > 50 and run["wall_seconds"] > 0 and "ents_f" in run["final_dev_scores"]
    # The callback releases memory and touches no weight: the same updates give the same scores.
    assert report["same_final_dev_scores"] is True
    assert report["peak_rss_ratio_trim_over_plain"] == round(trimmed["peak_rss_mib"] / plain["peak_rss_mib"], 3)
    assert output.with_suffix(".png").stat().st_size > 1000


def test_qa_memory_benchmark_evaluates_one_pass_and_chunked_with_the_same_scores(tmp_path, tiny_qa_encoder):
    from spacy_biolm.corpora.qa import QACorpus, convert_qa
    from spacy_biolm.testing import make_qa_nlp

    nlp = make_qa_nlp(tiny_qa_encoder, "answer_reranker", architecture="spacy-biolm.AnswerRerankerCosine.v1")
    rows = [f"{int(i % 4 == 0)}\tWhich drug treats it?\tCandidate {i} says BRCA1 is a gene ." for i in range(24)]
    tsv = tmp_path / "rr.tsv"
    tsv.write_text("label\tquestion\tanswer_candidate\n" + "\n".join(rows) + "\n", encoding="utf8")
    data = tmp_path / "test.spacy"
    convert_qa("reranking", tsv, data, nlp)
    nlp.initialize(lambda: list(QACorpus(data)(nlp)))
    nlp.to_disk(tmp_path / "model")
    output = tmp_path / "qa_memory.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "qa_memory.py"), "--model", str(tmp_path / "model"),
           "--data", str(data), "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    one_pass, chunked = report["runs"]["one pass per batch"], report["runs"]["chunks of 4096 wordpieces"]
    assert one_pass["max_batch_tokens"] == 0 and chunked["max_batch_tokens"] == 4096
    for run in (one_pass, chunked):
        assert run["peak_rss_mib"] > 50 and run["docs"] == 1 and "rerank_mrr" in run["scores"]
    assert report["same_scores"] is True
    assert report["peak_rss_ratio_chunked_over_one_pass"] == round(chunked["peak_rss_mib"] / one_pass["peak_rss_mib"], 3)


def test_annotate_benchmark_reports_docs_per_second_of_each_runner(tmp_path):
    from spacy_biolm.corpora.conll import convert_ner

    encoder = make_tiny_encoder(tmp_path / "encoder")
    docs = tmp_path / "ner.spacy"
    convert_ner(write_conll(tmp_path / "ner.tsv", disease_sentences(20, seed=3)), docs)
    abstracts = tmp_path / "abstracts.txt"
    abstracts.write_text("".join(" ".join(words) + "\n" for words, _ in disease_sentences(12, seed=4)))
    output = tmp_path / "annotate.json"
    # The Ray runner has its own test (spacy_biolm/annotate/tests/test_ray.py); its start is the slow part.
    cmd = [sys.executable, str(REPO / "benchmarks" / "annotate.py"), "--encoder", str(encoder), "--train", str(docs),
           "--abstracts", str(abstracts), "--n-docs", "10", "--shards", "3",
           "--runners", "pipe_1_process", "pipe_n_process", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert set(report["configs"]) == {"pipe_1_process", "pipe_n_process"}
    assert report["input"]["documents"] == 10 and report["input"]["shards"] == 3
    for config in report["configs"].values():
        assert config["documents"] == 10 and config["shards"] == 3
        # seconds are rounded to the millisecond: a fast pass of 0.055 s is +-1% of docs/s
        assert config["docs_per_second"] == pytest.approx(10 / config["seconds"], rel=0.02)
    assert report["configs"]["pipe_n_process"]["n_process"] == 2
    assert report["speedup_over_1_process"]["pipe_1_process"] == 1.0
    assert report["same_output"] is True
    assert set(report["run"]) >= {"commit", "date"}  # every benchmark result records its run (results/README.md)


def test_long_documents_benchmark_reports_time_memory_and_bounded_pairs(tmp_path):
    output = tmp_path / "long_documents.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "long_documents.py"), "--lengths", "2000", "6000",
           "--baseline-length", "6000", "--threads", "1", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert set(report["runs"]) == {"2000", "6000"}
    for length, run in report["runs"].items():
        assert int(length) - 200 <= run["chars"] <= int(length)  # cut at a sentence end
        assert run["sentences"] > 1 and run["entities"] > run["sentences"] / 2
        assert run["peak_rss_mib"] >= run["loaded_rss_mib"] > 50 and run["seconds"] > 0
        # Same-sentence pairs of a gene and a disease: far fewer than all pairs of the document.
        assert 0 < run["classified_pairs"] + run["skipped_pairs"] < run["entities"] ** 2 / 4
        assert run["pair_limit_warnings"] == (run["skipped_pairs"] > 0)
    per_million = report["seconds_per_million_chars"]
    for length, run in report["runs"].items():
        assert abs(per_million[length] - run["seconds"] / run["chars"] * 1e6) < 1e-2
    assert report["time_per_char_longest_over_shortest"] == round(per_million["6000"] / per_million["2000"], 3)
    linear = report["targets"]["time_linear_in_length"]
    assert linear["met"] == (linear["value"] <= linear["max_ratio"])
    assert report["targets"]["peak_rss_mib_at_200k_chars"]["met"] is None  # no 200k run here
    # Without sentence boundaries the window is the whole Doc: every gene-disease pair of it.
    whole, windowed = report["whole_document_window"], report["runs"]["6000"]
    assert whole["sentences"] is None and whole["entities"] == windowed["entities"]
    total = whole["classified_pairs"] + whole["skipped_pairs"]
    assert total > 2 * (windowed["classified_pairs"] + windowed["skipped_pairs"])
    assert report["whole_document_over_sentence_window_seconds"] == round(whole["seconds"] / windowed["seconds"], 2)


def test_long_documents_benchmark_measures_a_trained_pipeline_as_shipped(tmp_path, monkeypatch):
    # The synthetic pipeline, saved: --model must load it as shipped and give the same counts.
    monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
    import long_documents

    from spacy_biolm.testing import bio_text_documents, make_tiny_encoder

    encoder = make_tiny_encoder(tmp_path / "encoder", vocab_sentences=bio_text_documents(100, seed=10_000).splitlines(),
                                vocab_size=1000)
    long_documents.build_pipeline(encoder, None).to_disk(tmp_path / "pipeline")
    output = tmp_path / "model_long_documents.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "long_documents.py"), "--model", str(tmp_path / "pipeline"),
           "--lengths", "3000", "--baseline-length", "3000", "--threads", "1", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["pipeline"] == f"{tmp_path / 'pipeline'} (as shipped)"
    assert report["encoder"] == "the pipeline's own"
    run, whole = report["runs"]["3000"], report["whole_document_window"]
    assert run["sentences"] > 1 and whole["sentences"] is None  # its sentencizer, then without it
    assert run["entities"] == whole["entities"] > 0
    assert whole["classified_pairs"] + whole["skipped_pairs"] > run["classified_pairs"] + run["skipped_pairs"]


def test_release_encoders_benchmark_counts_encoder_passes(tiny_release, tmp_path):
    """An encoder per task reads every token once per encoder (and the anonymised relation
    extractor once more per pair); the release, one multi-task encoder, reads it once."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_biolm.testing import RELEASE_SENTENCE, bio_text_documents, make_tiny_per_task_release

    per_task_release, one = make_tiny_per_task_release(tiny_release), tiny_release
    nlp = spacy.load(tiny_release)
    texts = [RELEASE_SENTENCE] * 3 + [line for line in bio_text_documents(4, seed=1).splitlines() if line][:12]
    DocBin(docs=[nlp.make_doc(t) for t in texts]).to_disk(tmp_path / "texts.spacy")
    output = tmp_path / "release_encoders.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "release_encoders.py"), "--pipeline", f"per task={per_task_release}",
           "--pipeline", f"one={one}", "--texts", str(tmp_path / "texts.spacy"), "--n-docs", "0", "--threads", "1",
           "--repeats", "1", "--output", str(output)]
    env = dict(os.environ, HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    per_task, shared = report["pipelines"]["per task"], report["pipelines"]["one"]
    assert len(shared["encoders"]) == 1 and shared["encoder_passes_per_token"] == 1.0
    assert len(per_task["encoders"]) >= 3 and per_task["encoder_passes_per_token"] >= 3.0
    assert sum(e["is_transformer"] for e in per_task["encoders"]) == 1
    for entry in (per_task, shared):
        assert entry["docs"] == len(texts) and entry["words"] > len(texts)
        assert entry["words_per_second"] == pytest.approx(entry["words"] / entry["seconds"], rel=1e-3)
        assert entry["pipeline_over_raw_forward"] == round(entry["raw_forward_seconds"] / entry["seconds"], 3)
        assert entry["meets_target"] == (entry["pipeline_over_raw_forward"] >= report["target_pipeline_over_raw_forward"])


def test_int8_benchmark_reports_speed_and_f1_change_of_the_same_pipeline(tmp_path):
    sys.path.insert(0, str(REPO / "benchmarks"))
    from inference import build_pipeline

    from spacy_biolm.corpora.conll import convert_ner

    docs = tmp_path / "ner.spacy"
    convert_ner(write_conll(tmp_path / "ner.tsv", disease_sentences(12, seed=3)), docs)
    build_pipeline(make_tiny_encoder(tmp_path / "encoder"), docs, 12).to_disk(tmp_path / "pipeline")
    output = tmp_path / "int8.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "int8.py"), "--pipeline", str(tmp_path / "pipeline"),
           "--entities", f"Disease={docs}", "--texts", str(docs), "--n-docs", "8", "--repeats", "1",
           "--output", str(output)]
    result = subprocess.run(cmd, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    report = json.loads(output.read_text())
    assert report["int8_encoders"] == 1 and report["speed"]["docs"] == 8
    speed = report["speed"]
    assert speed["int8_speedup"] == pytest.approx(speed["int8_words_per_second"] / speed["float32_words_per_second"], rel=0.02)
    f1 = report["entity_f1"]
    assert f1["float32"]["Disease"]["docs"] == 12
    assert report["f1_change"]["Disease"] == round(f1["int8"]["Disease"]["f"] - f1["float32"]["Disease"]["f"], 2)
    assert report["offered"] == (report["f1_change"]["Disease"] >= -0.5)
    assert "| Disease F1 (" in output.with_suffix(".md").read_text()
    assert set(report["run"]) >= {"commit", "date"}
