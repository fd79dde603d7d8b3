"""The command line's shared behaviour: bad NAME=PATH arguments end with a message, the benchmark
launcher finds the repository's benchmark scripts."""

from pathlib import Path

from typer.testing import CliRunner

from spacy_biolm.cli import app
from spacy_biolm.cli.bench import benchmark_scripts

REPO = Path(__file__).resolve().parents[2]


def test_a_malformed_name_path_pair_ends_the_command_with_its_message(tmp_path):
    result = CliRunner().invoke(app, ["evaluate", "ner-table", str(tmp_path / "t.md"), "metrics/ner_test.json"])
    assert result.exit_code == 1
    assert "expected NAME=PATH, got 'metrics/ner_test.json'" in result.output
    assert not (tmp_path / "t.md").exists()


def test_bench_lists_the_runnable_benchmarks_not_their_helpers():
    names = [script.stem for script in benchmark_scripts(REPO)]
    assert names == ["annotate", "finetune_memory", "inference", "int8", "long_documents", "pretrain_gpu", "pretrain_memory", "pretrain_runs", "pretrain_throughput", "qa_memory",
                     "relations_throughput", "release_encoders", "train_padding", "train_precision", "train_threads"]
    listed = CliRunner().invoke(app, ["bench", "list", "--project-dir", str(REPO)])
    assert listed.exit_code == 0 and "inference" in listed.output and "pretraining_inputs" not in listed.output


def test_bench_run_refuses_an_unknown_benchmark_and_passes_options_through(tmp_path):
    unknown = CliRunner().invoke(app, ["bench", "run", "nope", "--project-dir", str(REPO)])
    assert unknown.exit_code != 0 and "inference" in unknown.output
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "echo.py").write_text(
        "import sys\nfrom pathlib import Path\n"
        "if __name__ == \"__main__\":\n    Path('args.txt').write_text(' '.join(sys.argv[1:]))\n")
    ran = CliRunner().invoke(app, ["bench", "run", "echo", "--project-dir", str(tmp_path), "--steps", "3", "--device", "cpu"])
    assert ran.exit_code == 0, ran.output
    assert (tmp_path / "args.txt").read_text() == "--steps 3 --device cpu"
