"""The layers of spacy_biolm, bottom first, and the scan that checks them.

The rule: a module imports only from its own layer and the layers below it. Every import counts,
at the top of a file or inside a function, absolute (``spacy_biolm.pipes``) or relative
(``..pipes``), because a deferred import is still a dependency. Test folders (``*/tests/``) and
``testing.py`` (test helpers) may import anything. ``spacy_biolm/tests/test_layers.py`` runs the
scan; docs/ARCHITECTURE.md shows :data:`LAYERS` between its ``layers`` markers
(:func:`layers_markdown`).

Stdlib only, imported by nothing at run time.
"""

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

__all__ = ["LAYERS", "EXEMPT", "ALLOWED", "unit_of", "layer_of", "imports", "violations", "layers_markdown",
           "LAYERS_START", "LAYERS_END"]

PACKAGE = "spacy_biolm"
ROOT = Path(__file__).parent

#: Bottom first: (layer, its members). A member is a top-level module or package of spacy_biolm
#: ("__init__" is the package's own __init__.py: the version and one re-export from doc_data).
LAYERS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("foundation", ("errors", "tokenizer", "run_record", "doc_data", "layers")),
    ("package", ("__init__", "versions")),
    ("corpora", ("corpora",)),
    ("pretraining", ("pretraining",)),
    ("encoders", ("encoders",)),
    ("pipes", ("pipes",)),
    ("training", ("training", "loading")),
    ("evaluation", ("evaluation",)),
    ("experiments", ("experiments",)),
    ("release_meta", ("release_meta",)),
    ("annotate", ("annotate",)),
    ("project", ("project_steps", "benchmark_sentences", "profiles", "workflow", "runtimes", "results_index", "wheels", "assets")),
    ("cli", ("cli", "__main__")),
)

#: Members that may import any layer: test helpers. (Every ``tests/`` folder is exempt too.)
EXEMPT = ("testing",)

#: Known upward imports kept for now: {("path/relative/to/spacy_biolm.py", "imported member"): reason}.
#: The test fails on an entry that no longer matches an import, so the list only shrinks.
ALLOWED: Dict[Tuple[str, str], str] = {}

LAYERS_START = "<!-- layers start: spacy_biolm/layers.py LAYERS, checked by spacy_biolm/tests/test_layers.py -->"
LAYERS_END = "<!-- layers end -->"


def unit_of(module: str, root: Path = ROOT) -> str:
    """The member of :data:`LAYERS` that dotted ``module`` belongs to (``spacy_biolm.pipes.base``
    -> ``pipes``; ``spacy_biolm`` or a name imported from it -> ``__init__``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    head = parts[1]
    if (root / head).is_dir() or (root / f"{head}.py").is_file():
        return head
    return "__init__"  # `from spacy_biolm import __version__`: a name of the package itself


def layer_of(unit: str) -> Optional[int]:
    """Index in :data:`LAYERS` of ``unit`` (None for an exempt or unknown member)."""
    for index, (_, members) in enumerate(LAYERS):
        if unit in members:
            return index
    return None


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path, root: Path = ROOT) -> Iterator[Tuple[int, str]]:
    """(line, dotted module) of every spacy_biolm import in ``path``, at any depth of the file,
    relative ones resolved against the file's package."""
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                targets = [f"{base}.{node.module}"] if node.module else [f"{base}.{a.name}" for a in node.names]
            else:
                targets = [node.module] if node.module else []
        else:
            continue
        for target in targets:
            if target == PACKAGE or target.startswith(PACKAGE + "."):
                yield node.lineno, target


def _scanned(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if "tests" in relative.parts[:-1] or relative.parts[0].removesuffix(".py") in EXEMPT:
            continue
        yield path


def violations(root: Path = ROOT, allowed: Optional[Dict[Tuple[str, str], str]] = None) -> Tuple[List[str], List[str]]:
    """(upward imports as ``file:line: member (layer) imports target (layer)``, entries of
    ``allowed`` (default :data:`ALLOWED`) that match no import). Unknown members count as errors
    too: a new top-level module must be given a layer."""
    allowed = ALLOWED if allowed is None else allowed
    found, used = [], set()
    for path in _scanned(root):
        relative = path.relative_to(root).as_posix()
        unit = relative.split("/")[0].removesuffix(".py")
        level = layer_of(unit)
        if level is None:
            found.append(f"{PACKAGE}/{relative}: {unit} is in no layer of spacy_biolm/layers.py LAYERS")
            continue
        for line, target in imports(path, root):
            other = unit_of(target, root)
            other_level = layer_of(other)
            if other in EXEMPT or other_level is None or other_level > level:
                if (relative, other) in allowed:
                    used.add((relative, other))
                    continue
                where = "in no layer" if other_level is None else f"layer {LAYERS[other_level][0]}"
                if other in EXEMPT:
                    where = "test helpers"
                found.append(f"{PACKAGE}/{relative}:{line}: {unit} (layer {LAYERS[level][0]}) imports {target} ({where})")
    stale = [f"{path} -> {unit}" for path, unit in allowed if (path, unit) not in used]
    return found, stale


def layers_markdown() -> str:
    """The numbered list docs/ARCHITECTURE.md shows between :data:`LAYERS_START` and :data:`LAYERS_END`."""
    def shown(member: str) -> str:
        if member == "__init__":
            return "`__init__.py`"
        return f"`{member}/`" if (ROOT / member).is_dir() else f"`{member}.py`"

    rows = [f"{index}. **{name}**: {', '.join(shown(m) for m in members)}"
            for index, (name, members) in enumerate(LAYERS, start=1)]
    return "\n".join(rows)
