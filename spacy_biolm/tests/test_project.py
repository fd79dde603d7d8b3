"""project.yml is trustworthy: `all` is its stages in order, commands stand in run order, every
dependency is made before it is needed, every spacy-biolm call names a real command and options;
and README's steps table is the one project.yml generates."""

import shlex
from pathlib import Path

import pytest
import typer

from spacy_biolm.cli import app
from spacy_biolm.project_steps import (
    STAGES,
    TABLE_END,
    TABLE_START,
    include_marker_lines,
    load_project,
    replace_steps_table,
    script_programs,
    stage_commands,
    steps_table,
    update_includes,
)

REPO = Path(__file__).resolve().parents[2]
PROJECT = load_project(REPO)
COMMANDS = {command["name"]: command for command in PROJECT["commands"]}
RUN_ORDER = [command["name"] for command in PROJECT["commands"]]


def test_all_is_the_stage_workflows_in_order():
    stages = stage_commands(PROJECT)
    assert list(stages) == list(STAGES)
    assert PROJECT["workflows"]["all"] == [name for stage in STAGES for name in stages[stage]]


def test_the_smoke_run_overrides_only_variables_the_project_has():
    # An override of a variable project.yml lacks is silently ignored: the smoke run would then
    # run with the full budgets.
    from tests.test_project_e2e import PRETRAIN_VARS, SMOKE_VARS

    assert set(SMOKE_VARS) <= set(PROJECT["vars"]), set(SMOKE_VARS) - set(PROJECT["vars"])
    assert set(PRETRAIN_VARS) <= set(_subproject("pretraining")["vars"]), PRETRAIN_VARS


def test_command_names_are_unique_and_not_workflow_names():
    assert len(RUN_ORDER) == len(set(RUN_ORDER))
    assert not set(RUN_ORDER) & set(PROJECT["workflows"])


@pytest.mark.parametrize("workflow", sorted(PROJECT["workflows"]))
def test_every_workflow_lists_existing_commands_in_run_order(workflow):
    names = PROJECT["workflows"][workflow]
    unknown = [name for name in names if name not in COMMANDS]
    assert not unknown, f"workflow {workflow} names unknown commands {unknown}"
    positions = [RUN_ORDER.index(name) for name in names]
    assert positions == sorted(positions), f"workflow {workflow} is not in the order of `commands`: {names}"


def test_variables_substitute_to_one_path_per_item():
    # weasel joins a list item that is exactly "${vars.x}" with a next item starting "${" into one
    # string ("a, b"): such items must not stand next to each other.
    for name in RUN_ORDER:
        for key in ("deps", "outputs"):
            for item in COMMANDS[name].get(key, []):
                assert ", " not in item and "${" not in item, f"{name} {key}: {item!r}"


def test_every_dependency_is_an_asset_an_earlier_output_or_a_repository_file():
    assets = {asset["dest"] for asset in PROJECT["assets"]}
    # A folder of assets (a corpus with its splits) stands for the assets inside it.
    asset_folders = {str(parent) for dest in assets for parent in Path(dest).parents}
    produced = set()
    for name in RUN_ORDER:
        command = COMMANDS[name]
        for dep in command.get("deps", []):
            assert dep in assets | asset_folders or dep in produced or (REPO / dep).exists(), (
                f"{dep} (a dep of {name}) is neither an asset, an output of an earlier command, nor a file of the repository")
        produced.update(command.get("outputs", []))


def test_no_output_is_written_by_two_commands():
    seen = {}
    for name in RUN_ORDER:
        for output in COMMANDS[name].get("outputs", []):
            assert output not in seen, f"{output} is an output of both {seen[output]} and {name}"
            seen[output] = name


def _cli_calls(project=PROJECT):
    """(command name, argv after `python -m spacy_biolm`) of every script line of ``project`` that runs our CLI."""
    for command in project["commands"]:
        name = command["name"]
        for line in command["script"]:
            tokens = shlex.split(line)
            if "--" in tokens and tokens[3:4] == ["timed"]:  # the timer's own call, then the timed one
                cut = tokens.index("--")
                yield name, tokens[3:cut]
                tokens = tokens[cut + 1:]
            if tokens[:3] == ["python", "-m", "spacy_biolm"]:
                yield name, tokens[3:]


@pytest.mark.parametrize("name,argv", list(_cli_calls()), ids=lambda value: value if isinstance(value, str) else "")
def test_every_cli_call_names_a_command_and_its_options(name, argv):
    _check_cli_call(name, argv)


def _check_cli_call(name, argv):
    """``argv`` (after `python -m spacy_biolm`) names a command of the app (a sub-app's, or one of
    the app's own such as `timed`) and only options it has (or config overrides, where it takes them)."""
    command, words = typer.main.get_command(app), []
    while hasattr(command, "commands"):
        assert argv[len(words):], f"{name}: `{' '.join(words)}` names no command"
        word = argv[len(words)]
        assert word in command.commands, f"{name}: no command {' '.join([*words, word])!r}"
        command, words = command.commands[word], [*words, word]
    known = {opt for param in command.params for opt in param.opts}
    takes_overrides = command.context_settings.get("ignore_unknown_options", False)
    for token in argv[len(words):]:
        if token.startswith("-") and not token.lstrip("-").isdigit():
            is_override = takes_overrides and "." in token
            assert token in known or is_override, f"{name}: {' '.join(words)} has no option {token}"


def test_config_files_named_in_scripts_exist():
    for name in RUN_ORDER:
        for line in COMMANDS[name]["script"]:
            for token in shlex.split(line):
                if token.startswith("configs/"):
                    assert (REPO / token).is_file(), f"{name} runs {token}, which is not in the repository"


def test_readme_steps_table_is_the_one_project_yml_generates():
    readme = (REPO / "README.md").read_text(encoding="utf8")
    assert replace_steps_table(readme, steps_table(PROJECT)) == readme, (
        "README's steps table differs from project.yml: run `spacy-biolm docs steps-table`")


def test_script_programs_are_what_a_reader_types():
    assert script_programs("python -m spacy_biolm relations train configs/x.cfg out --gpu-id -1") == "spacy-biolm relations train"
    assert script_programs("python -m spacy_biolm data assets . --mirror m") == "spacy-biolm data assets"
    assert script_programs("python -m spacy evaluate training/ner/model-best test.spacy") == "spacy evaluate"
    assert script_programs("torchrun --standalone x") == "torchrun"
    timed = "python -m spacy_biolm timed ner -- python -m spacy train configs/ner.cfg"
    assert script_programs(timed) == "spacy train"


def test_every_training_step_of_all_is_timed_into_one_file():
    # results/release.json quotes each component's training time from metrics/train_times.json.
    for name in PROJECT["workflows"]["all"]:
        for line in COMMANDS[name]["script"]:
            tokens = shlex.split(line)
            untimed_training = "train" in tokens[:5] and ("spacy" in tokens[:3] or "relations" in tokens[:4])
            assert not untimed_training, f"{name}: its training is not timed: {line[:80]}"
            if tokens[3:4] == ["timed"]:  # into the default file, metrics/train_times.json, and no README
                assert not {"--results", "--readme"} & set(tokens[:tokens.index("--")]), line[:80]


def test_steps_table_rows_follow_the_stages():
    project = {
        "workflows": {stage: [f"{stage}-a"] for stage in STAGES},
        "commands": [{"name": f"{stage}-a", "help": "does | things", "script": ["python -m spacy train c.cfg"],
                      "outputs": [f"out/{stage}"]} for stage in STAGES],
    }
    lines = steps_table(project).splitlines()
    assert lines[0] == "| stage | step | what it does | runs | writes |"
    assert lines[2] == "| **data** | `data-a` | does \\| things | `spacy train` | `out/data` |"
    assert len(lines) == 2 + len(STAGES)
    del project["workflows"]["qa"]
    with pytest.raises(KeyError, match="qa"):
        steps_table(project)
    project["workflows"]["qa"] = ["missing"]
    with pytest.raises(KeyError, match="missing"):
        steps_table(project)


def test_steps_table_is_replaced_between_the_markers_only():
    text = f"intro\n{TABLE_START}\nold table\n{TABLE_END}\noutro\n"
    assert replace_steps_table(text, "| new |\n") == f"intro\n{TABLE_START}\n| new |\n{TABLE_END}\noutro\n"
    with pytest.raises(ValueError, match="steps-table"):
        replace_steps_table("no markers here", "| new |\n")
    with pytest.raises(ValueError):
        replace_steps_table(f"{TABLE_END}\n{TABLE_START}\n", "| new |\n")


def test_docs_cli_writes_and_checks_the_table(tmp_path):
    from typer.testing import CliRunner

    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n{TABLE_START}\nstale\n{TABLE_END}\n", encoding="utf8")
    check = CliRunner().invoke(app, ["docs", "steps-table", str(REPO), "--readme", str(readme), "--check"])
    assert check.exit_code == 1 and "differs" in check.output
    write = CliRunner().invoke(app, ["docs", "steps-table", str(REPO), "--readme", str(readme)])
    assert write.exit_code == 0, write.output
    assert "| **release** | `assemble` |" in readme.read_text(encoding="utf8")
    again = CliRunner().invoke(app, ["docs", "steps-table", str(REPO), "--readme", str(readme), "--check"])
    assert again.exit_code == 0, again.output


def test_readme_quotes_the_results_files_it_includes_as_they_are():
    assert update_includes(REPO / "README.md", check=True) == [], "run `spacy-biolm docs includes`"


def test_includes_copy_results_tables_into_their_blocks_and_name_a_missing_file(tmp_path):
    from typer.testing import CliRunner

    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "t.md").write_text("| a |\n|---|\n| 1 |\n", encoding="utf8")
    start, end = include_marker_lines("results/t.md")
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\nbefore\n{start}\n| a |\n|---|\n| 0 |\n{end}\nafter\n", encoding="utf8")
    check = CliRunner().invoke(app, ["docs", "includes", "--readme", str(readme), "--check"])
    assert check.exit_code == 1 and "results/t.md" in check.output
    assert "| 0 |" in readme.read_text(encoding="utf8")  # --check writes nothing
    assert update_includes(readme) == ["results/t.md"]
    assert readme.read_text(encoding="utf8") == f"# x\nbefore\n{start}\n| a |\n|---|\n| 1 |\n{end}\nafter\n"
    assert update_includes(readme, check=True) == []
    (tmp_path / "results" / "t.md").unlink()
    missing = CliRunner().invoke(app, ["docs", "includes", "--readme", str(readme)])
    assert missing.exit_code == 1 and "results/t.md, which is missing" in missing.output


# The encoder ablation: an experiment project of its own (projects/<name>/, below).
ABLATION_DIR = "projects/encoder-ablation"


def test_all_ships_the_encoder_the_ablation_chose():
    import json

    shipped = PROJECT["vars"]["encoder_init"]
    released = REPO / shipped / "ablation.json"
    if released.is_file():  # a released encoder names the ablation that chose it, and its name there
        record = json.loads(released.read_text(encoding="utf8"))
        assert record["ablation"].startswith(f"{ABLATION_DIR}/results/"), record["ablation"]
        ablation = json.loads((REPO / record["ablation"]).read_text(encoding="utf8"))
        assert ablation["chosen"] == record["name"], f"{record['ablation']} chose {ablation['chosen']}, not {shipped}"
        # It was measured against the checkpoint the pooled-vector tasks keep.
        reference = ablation["encoders"][ablation["reference"]]["init"]
        assert PROJECT["vars"]["sentence_encoder_init"] == reference
        return
    ablation = json.loads((REPO / ABLATION_DIR / "results" / "encoders.json").read_text(encoding="utf8"))
    chosen = ablation["encoders"][ablation["chosen"]]["init"]
    assert shipped == chosen, f"{ABLATION_DIR}/results/encoders.json chose {ablation['chosen']} ({chosen}); `all` exports {shipped}"
    # An encoder pretrained here is made in the same run.
    if chosen.startswith("pretrained/"):
        assert any(any(out.startswith(chosen) for out in COMMANDS[name].get("outputs", []))
                   for name in PROJECT["workflows"]["all"]), f"no step of `all` writes {chosen}"


def test_the_release_ships_the_multitask_pipeline_it_evaluated():
    # The hallmarks' thresholds are tuned into the pipeline that evaluate-multitask scores: the
    # release must source that one (float16, as shipped), not the training output beside it.
    evaluated = "training/multitask_fp16"
    assert evaluated in COMMANDS["evaluate-multitask"]["outputs"]
    assert f"evaluate multitask {evaluated} " in " ".join(COMMANDS["evaluate-multitask"]["script"])
    assert f"--paths.multitask {evaluated} " in " ".join(COMMANDS["assemble"]["script"])
    assert evaluated in COMMANDS["assemble"]["deps"]


# --- the experiment projects: projects/<name>/project.yml, each run after the root's `all` -----------------------
SUBPROJECTS = sorted(path.parent.name for path in (REPO / "projects").glob("*/project.yml"))
# A sub-project reaches the root project's files and outputs through its var `root` ("../..").
ROOT_PREFIX = "../../"


def _subproject(name):
    return load_project(REPO / "projects" / name)


def _root_provides(path):
    """``path`` (relative to the root) is an asset, an output of a root command, an output of another
    experiment project (``projects/<name>/...``, or one it writes into the root: projects/pretraining's
    ``../../pretrained/...``), or a file of the repository."""
    parts = Path(path).parts
    if len(parts) > 2 and parts[0] == "projects" and parts[1] in SUBPROJECTS:
        relative = str(Path(*parts[2:]))
        return any(relative in command.get("outputs", []) for command in _subproject(parts[1])["commands"])
    assets = {asset["dest"] for asset in PROJECT["assets"]}
    asset_folders = {str(parent) for dest in assets for parent in Path(dest).parents}
    outputs = {output for command in PROJECT["commands"] for output in command.get("outputs", [])}
    outputs |= {output[len("../../"):] for name in SUBPROJECTS for command in _subproject(name)["commands"]
                for output in command.get("outputs", []) if output.startswith("../../")}
    return path in assets | asset_folders | outputs or (REPO / path).exists()


def test_there_are_experiment_projects_and_each_has_a_readme():
    assert {"encoder-ablation", "hoc-heads", "one-encoder"} <= set(SUBPROJECTS)
    for name in SUBPROJECTS:
        assert (REPO / "projects" / name / "README.md").is_file(), f"projects/{name} has no README.md"
        assert _subproject(name)["vars"].get("root") == "../..", f"projects/{name}: its var root must be ../.."


@pytest.mark.parametrize("name", SUBPROJECTS)
def test_a_subproject_names_existing_commands_in_run_order_and_no_command_twice(name):
    project = _subproject(name)
    run_order = [command["name"] for command in project["commands"]]
    assert len(run_order) == len(set(run_order)) and not set(run_order) & set(project.get("workflows", {}))
    for workflow, names in project.get("workflows", {}).items():
        unknown = [n for n in names if n not in run_order]
        assert not unknown, f"projects/{name}: workflow {workflow} names unknown commands {unknown}"
        positions = [run_order.index(n) for n in names]
        assert positions == sorted(positions), f"projects/{name}: workflow {workflow} is not in the order of `commands`"


@pytest.mark.parametrize("name", SUBPROJECTS)
def test_a_subprojects_dependencies_are_made_before_they_are_needed(name):
    # Its own: one of its assets (or their folder), an output of an earlier command or a file of the project;
    # the root's (../../...): an asset, an output of the root project or a file of the repository; another
    # project's (../<name>/...): one of its outputs.
    project = _subproject(name)
    assets = {asset["dest"] for asset in project.get("assets", [])}
    produced = assets | {str(parent) for dest in assets for parent in Path(dest).parents}
    for command in project["commands"]:
        for dep in command.get("deps", []):
            assert ", " not in dep and "${" not in dep, f"projects/{name} {command['name']}: {dep!r}"
            if dep.startswith(ROOT_PREFIX):
                assert _root_provides(dep[len(ROOT_PREFIX):]), f"projects/{name} {command['name']}: the root makes no {dep}"
            elif dep.startswith("../"):  # another experiment project's output
                assert _root_provides("projects/" + dep[len("../"):]), f"projects/{name} {command['name']}: no project makes {dep}"
            else:
                assert dep in produced or (REPO / "projects" / name / dep).exists(), (
                    f"projects/{name} {command['name']}: {dep} is neither an earlier output nor a file of the project")
        for output in command.get("outputs", []):
            assert ", " not in output and "${" not in output, f"projects/{name} {command['name']}: {output!r}"
        produced.update(command.get("outputs", []))


@pytest.mark.parametrize("name,argv", [(f"projects/{project}: {command}", argv) for project in SUBPROJECTS
                                       for command, argv in _cli_calls(_subproject(project))],
                         ids=lambda value: value if isinstance(value, str) else "")
def test_every_cli_call_of_a_subproject_names_a_command_and_its_options(name, argv):
    _check_cli_call(name, argv)


@pytest.mark.parametrize("name", SUBPROJECTS)
def test_config_files_a_subproject_runs_exist(name):
    # Relative to the project's folder (its own configs/, or ../../configs/ of the root), unless a
    # command of the project writes it (share-encoder's configs).
    project, produced = _subproject(name), set()
    for command in project["commands"]:
        produced.update(command.get("outputs", []))
        for line in command["script"]:
            for token in shlex.split(line):
                if token.endswith(".cfg") and "=" not in token and token not in produced:
                    assert (REPO / "projects" / name / token).is_file(), f"projects/{name} {command['name']} runs {token}, which is missing"


@pytest.mark.parametrize("readme", [*(f"projects/{name}/README.md" for name in SUBPROJECTS), "benchmarks/README.md"])
def test_an_experiment_readme_quotes_the_results_files_it_includes_as_they_are(readme):
    assert update_includes(REPO / readme, check=True) == [], f"run `spacy-biolm docs includes --readme {readme}`"
