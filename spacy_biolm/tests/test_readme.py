"""README stays a way in, not an experiment diary: its size is bounded, its numbers come from
result files, its example prints what the release recorded, and `make all` regenerates what it
quotes, so `make test` right after it passes."""

import json
import re
import shlex
from pathlib import Path

from spacy_biolm.release_meta.readme import readme_scores
from spacy_biolm.release_meta.sample import SAMPLE_TEXT, sample_markdown, sample_output
from spacy_biolm.project_steps import load_project

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf8")

# Numbers README may type: versions of what it installs, licences, the papers' years.
VERSION_CONTEXT = re.compile(r"(Python ≥ |spaCy |spacy-transformers |transformers < |v|CC BY |CC BY-SA |GPL-|Apache-|torch==)$")


def _prose(text: str) -> str:
    """README without its generated blocks, code blocks and inline code."""
    text = re.sub(r"<!-- ([\w-]+) start.*?<!-- \1 end -->", "", text, flags=re.DOTALL)
    text = re.sub(r"<!-- include (\S+) start.*?<!-- include \1 end -->", "", text, flags=re.DOTALL)
    text = re.sub(r"^```.*?^```", "", text, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", text)


def hand_typed_numbers(text: str) -> list:
    """Decimals and percentages in README's prose that are not a version or licence."""
    prose = _prose(text)
    found = []
    for match in re.finditer(r"\d+(?:\.\d+)+%?|\d+%", prose):
        if not VERSION_CONTEXT.search(prose[max(0, match.start() - 20):match.start()]):
            found.append(match.group())
    return found


def test_readme_and_the_root_recipe_stay_small():
    assert len(README.splitlines()) <= 300, "README.md is over 300 lines: move experiments to projects/<name>/README.md"
    lines = len((REPO / "project.yml").read_text(encoding="utf8").splitlines())
    assert lines <= 350, f"project.yml has {lines} lines: optional workflows belong in projects/<name>/project.yml"


def test_readme_prose_types_no_score():
    assert hand_typed_numbers(README) == [], "README quotes numbers by hand: generate them from a result file"
    assert hand_typed_numbers("F1 of 78.9 on test, 54% padding") == ["78.9", "54%"]
    assert hand_typed_numbers("spaCy 3.8 and `0.875` and\n<!-- scores-table start -->\n| 78.9 |\n<!-- scores-table end -->\n") == []


def test_readme_example_is_the_text_the_run_records():
    assert f'nlp("{SAMPLE_TEXT}")' in README


def test_all_regenerates_the_readme_blocks_that_quote_what_it_writes():
    # `make all` writes results/release.json (assemble: the scores; package: the wheel's size). README's
    # scores block and results/README.md must be rewritten after the last of them, or `make test` after
    # `make all` fails on stale copies.
    project = load_project(REPO)
    commands = {command["name"]: command for command in project["commands"]}
    writers = [name for name in project["workflows"]["all"] if "results/release.json" in commands[name].get("outputs", [])]
    assert writers == ["assemble"]
    assert project["workflows"]["all"][-1] == "package"
    release_meta = [shlex.split(line) for line in commands["assemble"]["script"]][-1]
    assert release_meta[3:5] == ["evaluate", "release-meta"] and "--sample-model" in release_meta
    script = [shlex.split(line) for line in commands["package"]["script"]]
    package = next(i for i, tokens in enumerate(script) if tokens[3:5] == ["release", "package"])
    scores = next(i for i, tokens in enumerate(script) if tokens[3:5] == ["docs", "scores-table"])
    index = next(i for i, tokens in enumerate(script) if tokens[3:5] == ["docs", "results-index"])
    assert "results/release.json" in script[package] and index > package and scores > package


def test_the_recorded_sample_is_shown_under_the_scores(tmp_path):
    results = json.loads((REPO / "results" / "release.json").read_text(encoding="utf8"))
    without = tmp_path / "without.json"
    without.write_text(json.dumps({k: v for k, v in results.items() if k != "sample"}), encoding="utf8")
    sample = {"text": SAMPLE_TEXT, "entities": [["BRCA1", "GENE"]], "relations": [["BRCA1", "breast cancer", "ASSOCIATION", 0.5]],
              "hallmarks": []}
    with_sample = tmp_path / "with.json"
    with_sample.write_text(json.dumps({**results, "sample": sample}), encoding="utf8")
    shown, plain = readme_scores(with_sample), readme_scores(without)
    assert sample_markdown(sample) in shown and sample_markdown(sample) not in plain
    assert shown.replace("\n" + sample_markdown(sample), "") == plain
    assert "[('BRCA1', 'GENE')]" in sample_markdown(sample) and "0.5)]" in sample_markdown(sample)


def test_sample_output_records_what_readmes_snippet_prints(tiny_release):
    import spacy

    from spacy_biolm.corpora.hoc import HALLMARKS

    nlp = spacy.load(tiny_release)
    record = sample_output(nlp)
    doc = nlp(SAMPLE_TEXT)
    assert record["text"] == SAMPLE_TEXT
    assert record["entities"] == [[ent.text, ent.label_] for ent in doc.ents]
    assert record["relations"] == [[r.head.text, r.tail.text, r.label, round(r.score, 2)] for r in doc._.relations]
    assert set(record["hallmarks"]) <= set(HALLMARKS)
    json.dumps(record)  # it goes into results/release.json


def test_the_wheels_size_is_shown_under_the_scores_once_the_package_step_recorded_it(tmp_path):
    results = json.loads((REPO / "results" / "release.json").read_text(encoding="utf8"))
    plain, packaged = tmp_path / "plain.json", tmp_path / "packaged.json"
    plain.write_text(json.dumps({k: v for k, v in results.items() if k != "wheel"}), encoding="utf8")
    packaged.write_text(json.dumps({**results, "wheel": {"file": "en_bio_electra-0.2.0-py3-none-any.whl", "bytes": 123_456_789}}),
                        encoding="utf8")
    line = "The pipeline wheel `en_bio_electra-0.2.0-py3-none-any.whl`: 123.5 MB."
    assert line in readme_scores(packaged) and "pipeline wheel" not in readme_scores(plain)


def test_the_release_speed_is_quoted_from_its_benchmark_and_only_for_the_shipped_pipeline(tmp_path):
    from spacy_biolm.release_meta.readme import speed_sentence

    speed = tmp_path / "release_encoders.json"
    entry = {"words_per_second": 2226.9, "pipeline_over_raw_forward": 0.907, "encoder_passes_per_token": 1.0}
    speed.write_text(json.dumps({"torch_threads": 1, "pipelines": {"one multi-task encoder": entry},
                                 "run": {"commit": "c79e1e9abc"}}), encoding="utf8")
    sentence = ("On CPU (1 torch thread) its default-on components read 2,227 words/s, 0.91 of one raw forward of "
                "its encoder, 1.00 encoder passes per token (`benchmarks/results/release_encoders.json`, commit c79e1e9).")
    assert speed_sentence(speed) == sentence and sentence in readme_scores(REPO / "results" / "release.json", speed)
    speed.write_text(json.dumps({"torch_threads": 1, "pipelines": {"an encoder per task": entry}}), encoding="utf8")
    assert speed_sentence(speed) == "" and speed_sentence(tmp_path / "missing.json") == ""


def test_readme_quotes_the_benchmarks_it_names_from_their_result_files():
    from spacy_biolm.benchmark_sentences import update_benchmark_sentences

    assert update_benchmark_sentences(REPO / "README.md", check=True) == [], "run `spacy-biolm docs benchmark-sentences`"
    assert "<!-- annotate-speed start" in README and "<!-- pretraining-speed start" in README


def test_benchmark_sentences_follow_their_result_files(tmp_path):
    from spacy_biolm.benchmark_sentences import (annotate_sentence, markers, pretraining_sentence,
                                                              update_benchmark_sentences)

    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    readme = tmp_path / "README.md"
    readme.write_text("Intro.\n" + "\n".join(markers("annotate-speed")) + "\nEnd.\n", encoding="utf8")
    assert annotate_sentence(tmp_path) == "" and pretraining_sentence(tmp_path) == ""
    annotate = {"input": {"documents": 2000}, "machine": {"cores": 2, "load_average_at_start": [0.1, 0.2, 0.3]},
                "torch_threads_per_process": 1, "same_output": False, "run": {"commit": "abcdef123"},
                "configs": {"pipe_1_process": {"docs_per_second": 10.0}, "pipe_n_process": {"docs_per_second": 19.0, "n_process": 2},
                            "ray_workers": {"docs_per_second": 17.5, "workers": 2}},
                "speedup_over_1_process": {"pipe_1_process": 1.0, "pipe_n_process": 1.9, "ray_workers": 1.75}}
    (results / "annotate.json").write_text(json.dumps(annotate), encoding="utf8")
    assert update_benchmark_sentences(readme, check=True) == ["annotate-speed"] and "docs/s" not in readme.read_text()
    assert update_benchmark_sentences(readme) == ["annotate-speed"] and update_benchmark_sentences(readme) == []
    text = readme.read_text(encoding="utf8")
    assert ("one process 10.0 docs/s, `--n-process 2` 19.0 (1.90x), Ray with 2 workers 17.5 (1.75x); "
            "**their outputs differ**.") in text and "commit abcdef1" in text and text.endswith("-->\nEnd.\n")
    int8 = {"speed": {"float32_words_per_second": 700.0, "int8_words_per_second": 2100.0},
            "f1_change": {"DISEASE": -0.3, "GENE": -0.62}, "max_drop": -0.5, "offered": False}
    (results / "int8.json").write_text(json.dumps(int8), encoding="utf8")
    assert ("`--int8` reads 3.00x the words/s at entity F1 -0.30 DISEASE, -0.62 GENE, not recommended"
            in annotate_sentence(tmp_path))
    script = {"device": "cpu", "device_name": "cpu (x86_64, 2 threads)", "speedup_vs_baseline": 1.25,
              "this_run": {"tokens_per_second": 125.0}, "baseline": {"tokens_per_second": 100.0}}
    (results / "pretrain_gpu_script_cpu.json").write_text(json.dumps(script), encoding="utf8")
    assert "has had no GPU yet" in pretraining_sentence(tmp_path)
    gpu = dict(script, device="cuda", device_name="NVIDIA H200", speedup_vs_baseline=12.0,
               this_run={"tokens_per_second": 1.5e6, "model_flops_utilization": 0.31})
    (results / "pretrain_gpu_script.json").write_text(json.dumps(gpu), encoding="utf8")
    sentence = pretraining_sentence(tmp_path)
    assert ("measured on NVIDIA H200: 1,500,000.0 WordPieces/s against 100.0 for today's loop on the same batches "
            "(12.00x, model FLOPs utilisation 31.0%") in sentence and "no GPU" not in sentence


def test_the_release_finds_its_five_entity_types_in_readmes_example():
    from spacy_biolm.corpora.entity_types import RELEASE_TYPES

    sample = json.loads((REPO / "results" / "release.json").read_text(encoding="utf8"))["sample"]
    assert sample["text"] == SAMPLE_TEXT, "results/release.json predates README's example text: run `make all`"
    assert {label for _, label in sample["entities"]} == set(RELEASE_TYPES), sample["entities"]
