"""The README's table of what `spacy project run all` does, generated from project.yml.

project.yml runs ``all`` as stages (workflows ``data``, ``encoder``, ``baselines``, ``multitask``,
``qa``, ``release``); the table lists each stage's commands with their help text,
the programs they run and what they write, so the README cannot drift from the recipe. It lives
between two marker comments in README.md; ``spacy-biolm docs steps-table`` rewrites it there.
"""

import re
import shlex
from pathlib import Path
from typing import Dict, List, Tuple, Union

__all__ = [
    "STAGES",
    "TABLE_START",
    "TABLE_END",
    "load_project",
    "stage_commands",
    "script_programs",
    "steps_table",
    "replace_generated",
    "replace_steps_table",
    "rewrite_generated",
    "update_readme",
    "include_marker_lines",
    "update_includes",
]

PathLike = Union[str, Path]

# The stage workflows whose commands, in this order, make up workflow `all`.
STAGES = ("data", "encoder", "baselines", "multitask", "qa", "release")
TABLE_START = "<!-- steps-table start: generated from project.yml by `spacy-biolm docs steps-table`; do not edit -->"
TABLE_END = "<!-- steps-table end -->"
# A sub-command word of `python -m <module> ...` (paths, options and values are not).
_COMMAND_WORD = re.compile(r"[a-z][a-z-]*")


def load_project(project_dir: PathLike) -> Dict[str, object]:
    """project.yml of ``project_dir`` with its ``${vars.*}`` substituted (the defaults), read without
    weasel's side effects (it creates the project's directories when it loads a project)."""
    import srsly
    from weasel.util import substitute_project_variables

    path = Path(project_dir) / "project.yml"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found")
    return substitute_project_variables(srsly.read_yaml(path))


def stage_commands(project: Dict[str, object]) -> Dict[str, List[str]]:
    """``{stage: [command name, ...]}`` for each of :data:`STAGES`; KeyError names a missing stage."""
    workflows = project.get("workflows", {})
    missing = [stage for stage in STAGES if stage not in workflows]
    if missing:
        raise KeyError(f"project.yml has no workflow {', '.join(missing)}; its stages are {', '.join(STAGES)}")
    return {stage: list(workflows[stage]) for stage in STAGES}


def script_programs(script: str) -> str:
    """What a script line runs, as a reader types it: ``python -m spacy_biolm relations train
    CONFIG ...`` -> ``spacy-biolm relations train``; ``python -m spacy evaluate ...`` -> ``spacy evaluate``;
    ``python -m spacy_biolm timed NAME -- python -m spacy train ...`` -> ``spacy train``."""
    tokens = shlex.split(script)
    if tokens[:4] == ["python", "-m", "spacy_biolm", "timed"] and "--" in tokens:
        tokens = tokens[tokens.index("--") + 1:]  # a timed step runs what follows `--`
    if tokens[:2] == ["python", "-m"] and len(tokens) > 2:
        program, rest = tokens[2].replace("_", "-"), tokens[3:]
    else:
        program, rest = tokens[0], tokens[1:]
    words = []
    for token in rest[:2]:  # at most a sub-app and its command
        if not _COMMAND_WORD.fullmatch(token):
            break
        words.append(token)
    return " ".join([program, *words])


def steps_table(project: Dict[str, object]) -> str:
    """Markdown table, one row per command of ``all`` in run order: stage, step, what it does
    (its help), what it runs and what it writes (its outputs)."""
    commands = {command["name"]: command for command in project.get("commands", [])}
    rows = ["| stage | step | what it does | runs | writes |", "|---|---|---|---|---|"]
    for stage, names in stage_commands(project).items():
        for i, name in enumerate(names):
            if name not in commands:
                raise KeyError(f"workflow {stage!r} names {name!r}, which is not a command of project.yml")
            command = commands[name]
            programs = list(dict.fromkeys(script_programs(line) for line in command.get("script", [])))
            cells = [
                f"**{stage}**" if i == 0 else "",
                f"`{name}`",
                command.get("help", "").replace("|", "\\|"),
                ", ".join(f"`{p}`" for p in programs),
                ", ".join(f"`{output}`" for output in command.get("outputs", [])),
            ]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def replace_generated(text: str, body: str, start_marker: str, end_marker: str) -> str:
    """``text`` with whatever stands between ``start_marker`` and ``end_marker`` replaced by
    ``body``; ValueError when the markers are not there once each, in that order."""
    start, end = text.find(start_marker), text.find(end_marker)
    if text.count(start_marker) != 1 or text.count(end_marker) != 1 or end < start:
        raise ValueError(f"expected one {start_marker!r} line and, after it, one {end_marker!r} line")
    return text[: start + len(start_marker)] + "\n" + body + text[end:]


def rewrite_generated(path: PathLike, body: str, start_marker: str, end_marker: str) -> bool:
    """Replace what stands between the markers in the file ``path`` by ``body`` (as
    :func:`replace_generated`), writing only when it differs; True if it changed."""
    path = Path(path)
    text = path.read_text(encoding="utf8")
    updated = replace_generated(text, body, start_marker, end_marker)
    if updated != text:
        path.write_text(updated, encoding="utf8")
    return updated != text


def include_marker_lines(path: str) -> Tuple[str, str]:
    """The start and end lines that make README show the results file ``path`` (a Markdown table a
    run wrote, e.g. ``results/hoc_full_seeds.md``) verbatim; :func:`update_includes` fills them."""
    return (f"<!-- include {path} start: written by the run; do not edit -->",
            f"<!-- include {path} end -->")


# Any include block: the markers above around a path, the block's body between them.
_START, _END = (re.escape(line).replace("PATH", "{}") for line in include_marker_lines("PATH"))
INCLUDE_PATTERN = re.compile(_START.format(r"(?P<path>\S+)") + r"\n(?P<body>.*?)" + _END.format("(?P=path)"), re.S)


def update_includes(readme: PathLike, check: bool = False) -> List[str]:
    """Copy each file that ``readme`` includes (between :func:`include_marker_lines`, paths relative
    to the README's folder) into its block, so a table a run wrote is quoted, not retyped. Returns
    the paths whose block was stale; with ``check`` nothing is written. FileNotFoundError names a
    block whose file is missing."""
    readme = Path(readme)
    root = readme.parent
    text = readme.read_text(encoding="utf8")
    stale = []

    def fill(match: "re.Match") -> str:
        source = root / match["path"]
        if not source.is_file():
            raise FileNotFoundError(f"{readme} includes {match['path']}, which is missing under {root}")
        body = source.read_text(encoding="utf8").rstrip("\n") + "\n"
        if body != match["body"]:
            stale.append(match["path"])
        start, end = include_marker_lines(match["path"])
        return f"{start}\n{body}{end}"

    updated = INCLUDE_PATTERN.sub(fill, text)
    if stale and not check:
        readme.write_text(updated, encoding="utf8")
    return stale


def replace_steps_table(text: str, table: str) -> str:
    """``text`` with the steps table between :data:`TABLE_START` and :data:`TABLE_END` replaced."""
    return replace_generated(text, table, TABLE_START, TABLE_END)


def update_readme(readme: PathLike, project_dir: PathLike) -> bool:
    """Rewrite the steps table in ``readme`` from ``project_dir/project.yml``; True if it changed."""
    return rewrite_generated(readme, steps_table(load_project(project_dir)), TABLE_START, TABLE_END)
