"""`spacy-biolm annotate`: arguments and bad output folders end with a message, before any model loads."""

from typer.testing import CliRunner

from spacy_biolm.cli import app


def test_annotate_needs_an_input_and_an_output(tmp_path):
    result = CliRunner().invoke(app, ["annotate", str(tmp_path)])
    assert result.exit_code != 0 and "INPUT... OUTPUT" in result.output


def test_unwritable_output_fails_at_once_with_the_folder_named(tmp_path):
    shard = tmp_path / "a.jsonl"
    shard.write_text('{"id": "1", "text": "BRCA1"}\n')
    result = CliRunner().invoke(app, ["annotate", str(shard), "/sys/annotations", "--model", "no-such-pipeline"])
    assert result.exit_code == 1
    assert "/sys/annotations: cannot create the output folder" in result.output  # not "no-such-pipeline"
    result = CliRunner().invoke(app, ["annotate", str(shard), str(tmp_path / "out"), "--model", "no-such-pipeline",
                                      "--min-free-mb", "1e12"])
    assert result.exit_code == 1 and "disk is full" in result.output
    assert list((tmp_path / "out").iterdir()) == []
