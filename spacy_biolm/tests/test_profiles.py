"""Run profiles: a profile names only project.yml's variables, keeps every last update evaluated,
and becomes the `spacy project run` command with its overrides."""

from pathlib import Path

import pytest

from spacy_biolm.profiles import check_budgets, load_profile, profile_args, profile_vars

REPO = Path(__file__).resolve().parents[2]


def _project(tmp_path, profile_text=None):
    (tmp_path / "project.yml").write_text("vars:\n  ner_steps: 200\n  ner_eval_frequency: 100\n  profile: default\n")
    if profile_text is not None:
        (tmp_path / "configs" / "profiles").mkdir(parents=True)
        (tmp_path / "configs" / "profiles" / "full.yml").write_text(profile_text)
    return tmp_path


# The root's profiles and those of each experiment project (projects/<name>/configs/profiles/).
PROFILES = [(REPO, "default")] + [(path.parents[2], path.stem) for path in sorted(REPO.glob("configs/profiles/*.yml"))
                                  + sorted(REPO.glob("projects/*/configs/profiles/*.yml"))]


@pytest.mark.parametrize("project,name", PROFILES, ids=[f"{p.relative_to(REPO)}:{n}" for p, n in PROFILES])
def test_every_profile_of_every_project_loads_and_evaluates_each_last_update(project, name):
    variables = profile_vars(name, project)
    assert variables["profile"] == name


def test_full_is_longer_than_default_where_the_papers_train_longer():
    default, full = profile_vars("default", REPO), profile_vars("full", REPO)
    for steps in ("multitask_steps", "ner_cnn_steps", "hoc_steps"):
        assert int(full[steps]) > int(default[steps]), steps


def test_the_options_pass_the_overrides_then_the_extra_options(tmp_path):
    project = _project(tmp_path, "ner_steps: 400\nner_eval_frequency: 200\n")
    assert profile_args("full", project, ["--vars.gpu_id", "0"]) == [
        "--vars.ner_steps", "400", "--vars.ner_eval_frequency", "200", "--vars.profile", "full", "--vars.gpu_id", "0"]
    assert profile_args("default", project) == ["--vars.profile", "default"]


def test_an_unknown_variable_is_an_error_naming_the_file(tmp_path):
    project = _project(tmp_path, "ner_step: 400\n")
    with pytest.raises(KeyError, match=r"full.yml: ner_step not variables of project.yml"):
        load_profile("full", project)


def test_a_missing_profile_lists_the_profiles_there_are(tmp_path):
    project = _project(tmp_path, "ner_steps: 400\nner_eval_frequency: 200\n")
    with pytest.raises(FileNotFoundError, match="Profiles: default, full"):
        load_profile("fast", project)


def test_a_frequency_that_leaves_the_last_update_unevaluated_is_refused(tmp_path):
    project = _project(tmp_path, "ner_steps: 450\n")
    with pytest.raises(ValueError, match="profile 'full': ner_eval_frequency=100 does not divide ner_steps=450"):
        profile_args("full", project)
    with pytest.raises(ValueError, match="must be whole numbers"):
        check_budgets({"hoc_steps": "many", "hoc_eval_frequency": 50}, "here")


def test_a_profile_extends_another_projects_for_the_variables_it_has(tmp_path):
    root = _project(tmp_path, "ner_steps: 400\nner_eval_frequency: 200\nner_cnn_steps: 900\n")
    (root / "project.yml").write_text("vars:\n  ner_steps: 200\n  ner_eval_frequency: 100\n  ner_cnn_steps: 300\n")
    child = root / "projects" / "one"
    (child / "configs" / "profiles").mkdir(parents=True)
    (child / "project.yml").write_text("vars:\n  ner_steps: 200\n  ner_eval_frequency: 100\n  variant: ''\n")
    (child / "configs" / "profiles" / "full.yml").write_text(
        "extends: ../../../../configs/profiles/full.yml\nner_eval_frequency: 100\nvariant: full_\n")
    # ner_cnn_steps is the root's only; the child's own ner_eval_frequency replaces the root's.
    assert load_profile("full", child) == {"ner_steps": 400, "ner_eval_frequency": 100, "variant": "full_", "profile": "full"}
    (child / "configs" / "profiles" / "full.yml").write_text("extends: ../../../../configs/profiles/fast.yml\n")
    with pytest.raises(FileNotFoundError, match=r"full.yml: extends '../../../../configs/profiles/fast.yml', which is no other profile"):
        load_profile("full", child)
    (child / "configs" / "profiles" / "full.yml").write_text("extends: full.yml\n")
    with pytest.raises(FileNotFoundError, match="or is this file"):
        load_profile("full", child)
