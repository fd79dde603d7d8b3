"""The layers hold: no module of spacy_biolm imports from a layer above its own (imports inside
functions included), and docs/ARCHITECTURE.md shows the layers this test enforces and names every
package folder."""

import re
from pathlib import Path

from spacy_biolm.layers import (
    ALLOWED, LAYERS, LAYERS_END, LAYERS_START, ROOT, imports, layer_of, layers_markdown, unit_of, violations,
)

ARCHITECTURE = ROOT.parent / "docs" / "ARCHITECTURE.md"


def test_no_module_imports_from_a_higher_layer():
    found, stale = violations()
    assert not found, ("upward imports (move the function down, or pass it in from cli/; "
                       "see spacy_biolm/layers.py):\n" + "\n".join(found))
    assert not stale, f"ALLOWED entries that match no import any more (remove them): {stale}"


def test_every_member_is_in_one_layer():
    members = [m for _, layer in LAYERS for m in layer]
    assert len(members) == len(set(members)), members
    on_disk = {p.stem for p in ROOT.glob("*.py")} | {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert on_disk - {"testing", "tests"} <= set(members) | {"__init__"}


def test_allowed_entries_say_why():
    for (path, member), reason in ALLOWED.items():
        assert (ROOT / path).is_file() and layer_of(member) is not None and len(reason) > 20, (path, member)


def _scan(tmp_path, files):
    root = tmp_path / "spacy_biolm"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf8")
    return root


def test_the_scan_sees_relative_absolute_and_deferred_imports(tmp_path):
    root = _scan(tmp_path, {
        "__init__.py": "__version__ = '0'\n",
        "errors.py": "",
        "pretraining/__init__.py": "",
        "pretraining/card.py": "import json\nfrom . import loop\n\ndef f():\n    from ..evaluation.encoders import table\n",
        "pretraining/loop.py": "import spacy_biolm.evaluation\n",
        "pretraining/tests/__init__.py": "",
        "pretraining/tests/test_card.py": "from spacy_biolm.cli import app\n",  # tests may import anything
        "evaluation/__init__.py": "",
        "evaluation/encoders.py": "from ..pretraining.loop import x\nfrom spacy_biolm import __version__\n",
        "cli/__init__.py": "from spacy_biolm.testing import helper\n",
        "testing.py": "from .cli import app\n",
    })
    assert list(imports(root / "pretraining" / "card.py", root)) == [(2, "spacy_biolm.pretraining.loop"),
                                                                     (5, "spacy_biolm.evaluation.encoders")]
    assert unit_of("spacy_biolm.__version__", root) == "__init__"
    found, stale = violations(root, allowed={})
    assert found == [
        "spacy_biolm/cli/__init__.py:1: cli (layer cli) imports spacy_biolm.testing (test helpers)",
        "spacy_biolm/pretraining/card.py:5: pretraining (layer pretraining) imports spacy_biolm.evaluation.encoders (layer evaluation)",
        "spacy_biolm/pretraining/loop.py:1: pretraining (layer pretraining) imports spacy_biolm.evaluation (layer evaluation)",
    ]
    found, stale = violations(root, allowed={("pretraining/loop.py", "evaluation"): "a reason", ("errors.py", "cli"): "gone"})
    assert len(found) == 2 and stale == ["errors.py -> cli"]


def _layers_block(text):
    start, end = text.index(LAYERS_START) + len(LAYERS_START), text.index(LAYERS_END)
    return text[start:end].strip()


def test_the_architecture_doc_shows_the_enforced_layers():
    text = ARCHITECTURE.read_text(encoding="utf8")
    assert _layers_block(text) == layers_markdown(), (
        f"docs/ARCHITECTURE.md's layer list differs from spacy_biolm/layers.py; between the markers put:\n{layers_markdown()}")


def test_the_architecture_doc_names_every_package_folder():
    text = ARCHITECTURE.read_text(encoding="utf8")
    folders = sorted(p.parent.relative_to(ROOT).as_posix() for p in ROOT.rglob("__init__.py")
                     if "tests" not in p.relative_to(ROOT).parts and p.parent != ROOT)
    assert folders
    missing = [f for f in folders if not re.search(rf"`(spacy_biolm/)?{re.escape(f)}/`", text)]
    assert not missing, f"docs/ARCHITECTURE.md names no `{{folder}}/` for: {missing}"


def test_the_architecture_doc_is_short():
    assert len(ARCHITECTURE.read_text(encoding="utf8").splitlines()) <= 200
