"""Run profiles: named sets of project.yml variables that give every task its budget.

project.yml's own ``vars`` are the ``default`` profile (what ``make all`` runs on 2 CPU cores).
Another profile is a YAML file ``configs/profiles/<name>.yml`` of variables that replace those
defaults, e.g. ``full``: the papers' epochs. ``spacy-biolm profile run full all`` (``make all
PROFILE=full``) runs a workflow (:func:`spacy_biolm.workflow.run_workflow`) with them as ``--vars.*`` overrides, and the ``profile`` variable
it sets is recorded in ``results/release.json`` beside the scores.

A profile may start from another project's profile: ``extends: PATH`` (relative to the profile's
file) takes that profile's values for the variables this project has too, and the
file's own values replace them; an experiment project's ``full`` so follows the root's ``full``.

A profile may only name variables project.yml has (weasel silently ignores an unknown override,
so a typo would run the default budget), and in every profile each evaluation frequency divides its
steps: spaCy evaluates every ``eval_frequency`` updates, and otherwise the last updates are never
evaluated and never become ``model-best``.
"""

from pathlib import Path
from typing import Dict, List, Sequence, Union

from .project_steps import load_project

__all__ = ["DEFAULT_PROFILE", "PROFILES_DIR", "BUDGETS", "profile_path", "load_profile", "profile_vars",
           "check_budgets", "profile_args"]

PathLike = Union[str, Path]
DEFAULT_PROFILE = "default"
PROFILES_DIR = Path("configs") / "profiles"
# (steps variable, the variable with its evaluation frequency): each pair's frequency divides its steps.
BUDGETS = (
    ("multitask_steps", "multitask_eval_frequency"),
    ("ner_steps", "ner_eval_frequency"),
    ("ner_cnn_steps", "ner_cnn_eval_frequency"),
    ("ner_gene_steps", "ner_gene_eval_frequency"),
    ("re_steps", "re_eval_frequency"),
    ("qa_yes_no_steps", "qa_eval_frequency"),
    ("qa_answer_span_steps", "qa_eval_frequency"),
    ("qa_answer_span_transfer_steps", "qa_transfer_eval_frequency"),
    ("qa_reranker_steps", "qa_eval_frequency"),
    ("hoc_steps", "hoc_eval_frequency"),
    ("seeds_ner_steps", "seeds_eval_frequency"),
    ("ablation_ner_steps", "ablation_ner_eval_frequency"),
    ("ablation_re_steps", "ablation_re_eval_frequency"),
    ("ablation_yes_no_steps", "ablation_yes_no_eval_frequency"),
)


def profile_path(name: str, project_dir: PathLike = ".") -> Path:
    """The YAML file of profile ``name`` (``configs/profiles/<name>.yml``)."""
    return Path(project_dir) / PROFILES_DIR / f"{name}.yml"


def load_profile(name: str, project_dir: PathLike = ".") -> Dict[str, object]:
    """The variables profile ``name`` overrides, ``profile`` = ``name`` among them (only that for
    the default), checked against project.yml. Errors name the file: a missing profile (listing
    those there are), a file that is not a mapping, a variable project.yml lacks, a value that is
    not a scalar, an ``extends`` that is no profile, and the budgets :func:`check_budgets` refuses."""
    import srsly

    project_vars = load_project(project_dir).get("vars", {})
    overrides: Dict[str, object] = {}
    if name != DEFAULT_PROFILE:
        path = profile_path(name, project_dir)
        if not path.is_file():
            known = sorted(p.stem for p in (Path(project_dir) / PROFILES_DIR).glob("*.yml"))
            raise FileNotFoundError(f"No profile {name!r}: {path} does not exist. Profiles: {', '.join([DEFAULT_PROFILE, *known])}")
        overrides = srsly.read_yaml(path)
        if not isinstance(overrides, dict):
            raise ValueError(f"{path}: expected a mapping of project.yml variables to values, got {type(overrides).__name__}")
        if "extends" in overrides:
            overrides = {**_inherited(path, str(overrides.pop("extends")), project_vars), **overrides}
        unknown = sorted(set(overrides) - set(project_vars))
        if unknown:
            raise KeyError(f"{path}: {', '.join(unknown)} not variables of project.yml (a typo would run the default budget)")
        not_scalar = sorted(key for key, value in overrides.items() if isinstance(value, (dict, list)) or value is None)
        if not_scalar:
            raise ValueError(f"{path}: {', '.join(not_scalar)} must be a number or a string")
    overrides = {**overrides, "profile": name}
    check_budgets({**project_vars, **overrides}, f"profile {name!r}")
    return overrides


def _inherited(path: Path, extends: str, project_vars: Dict[str, object]) -> Dict[str, object]:
    """The values of the profile ``extends`` names (a path relative to ``path``, a profile file of
    another project: ``<project>/configs/profiles/<name>.yml``), checked against its own project.yml,
    for the variables of ``project_vars``."""
    parent = (path.parent / extends).resolve()
    if not parent.is_file() or parent.parent != parent.parents[2] / PROFILES_DIR or parent == path.resolve():
        raise FileNotFoundError(f"{path}: extends {extends!r}, which is no other profile file ({parent} does not "
                                f"exist, is not in a project's {PROFILES_DIR} or is this file)")
    values = load_profile(parent.stem, parent.parents[2])
    return {key: value for key, value in values.items() if key in project_vars and key != "profile"}


def profile_vars(name: str, project_dir: PathLike = ".") -> Dict[str, object]:
    """project.yml's variables as profile ``name`` sets them: the defaults, then its overrides."""
    return {**load_project(project_dir).get("vars", {}), **load_profile(name, project_dir)}


def check_budgets(variables: Dict[str, object], where: str) -> None:
    """ValueError naming ``where`` and the variables when an evaluation frequency of :data:`BUDGETS`
    does not divide its steps (or a budget is not a positive whole number)."""
    problems = []
    for steps_var, frequency_var in BUDGETS:
        if steps_var not in variables or frequency_var not in variables:
            continue
        try:
            steps, frequency = int(variables[steps_var]), int(variables[frequency_var])
        except (TypeError, ValueError):
            problems.append(f"{steps_var}={variables[steps_var]!r} and {frequency_var}={variables[frequency_var]!r} must be whole numbers")
            continue
        if steps <= 0 or frequency <= 0 or steps % frequency:
            problems.append(f"{frequency_var}={frequency} does not divide {steps_var}={steps}")
    if problems:
        raise ValueError(f"{where}: " + "; ".join(problems) + " (the last update would never be evaluated)")


def profile_args(name: str, project_dir: PathLike = ".", extra: Sequence[str] = ()) -> List[str]:
    """``--vars.K V ...`` for profile ``name`` (its overrides and ``profile``), then ``extra``
    (e.g. ``--vars.gpu_id 0``): the options of ``spacy project run`` that run it."""
    args = []
    for key, value in load_profile(name, project_dir).items():  # checked before anything runs
        args += [f"--vars.{key}", str(value)]
    return args + list(extra)
