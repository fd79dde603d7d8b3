"""The release installs from its two wheels into a fresh virtual environment and runs there, and
README's Python snippets run as written against it.

The tiny release (every component of configs/release.cfg, QA pipes included) is packaged with
``spacy-biolm release package`` (the project's ``package`` step). A new venv gets our two packages
with ``pip install --no-index --find-links <the two dist dirs>``: nothing of ours can come from
anywhere else, and the test checks that spacy_biolm is imported from the venv, not this checkout.

The dependencies (torch, spaCy, transformers, ...): installing them into a new venv from the
machine's package index took 92 s on the shared 2-core machine (torch is most of it); this file
took 262 s that way (``SPACY_BIOLM_INSTALL_DEPS=index``) against 55-80 s with the layer below,
under the same load. By default the venv therefore sees them as a read-only *dependency layer*:
a directory of links to this environment's installed distributions *minus* spacy-biolm and any
en_bio_electra (no editable install, no .pth hooks), named in a .pth file of the venv. pip
resolves our wheels' requirements against exactly those distributions (``--no-index``: a
requirement they do not satisfy fails the install), and the pinned versions are the ones
``make install`` resolved from the same pyproject.toml. Set ``SPACY_BIOLM_INSTALL_DEPS=index`` to
install the dependencies into the venv from the package index instead (the full fresh install).
"""

import json
import os
import re
import shutil
import subprocess
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from spacy_biolm import __version__
from spacy_biolm.corpora.hoc import HALLMARKS
from spacy_biolm.testing import REPO, RELEASE_SENTENCE
from spacy_biolm.wheels import build_release_wheels

pytestmark = pytest.mark.slow

# Not part of the dependency layer: our own distributions (the venv must get them from the wheels).
_OURS = re.compile(r"^(spacy_biolm|spacy-biolm|__editable__.*spacy_biolm.*|en_bio_electra).*", re.IGNORECASE)

# Runs in the venv: the release on one text through every component and the QA pipes on a
# question Doc; prints what the test asserts.
_RUN_RELEASE = f"""
import json, spacy, spacy_biolm
from spacy_biolm import make_question_doc
nlp = spacy.load("en_bio_electra")
doc = nlp({RELEASE_SENTENCE!r})
question = make_question_doc(nlp, "Which gene is mutated?", [{RELEASE_SENTENCE!r}, "Nothing else is known."])
for name in nlp.disabled:
    question = nlp.get_pipe(name)(question)
print(json.dumps({{
    "spacy_biolm": spacy_biolm.__file__, "version": spacy_biolm.__version__,
    "requirements": nlp.meta["requirements"], "pipe_names": nlp.pipe_names, "disabled": nlp.disabled,
    "tokens": len(doc), "encoded": doc._.trf_data is not None, "has_ents": doc.has_annotation("ENT_IOB"),
    "relations": [[r.head.text, r.tail.text, r.label] for r in doc._.relations], "hallmarks": sorted(doc.cats),
    "cats": sorted(question.cats), "answers": len(question.spans["answers"]),
    "ranked": len(question.spans["ranked_sents"]),
}}))
"""


def readme_python_blocks(readme: Path = REPO / "README.md") -> list:
    """The ```python blocks of README.md, in order."""
    return re.findall(r"^```python\n(.*?)^```", readme.read_text(encoding="utf8"), flags=re.DOTALL | re.MULTILINE)


def _link_dependency_layer(layer: Path) -> None:
    """Links to this environment's installed distributions, without ours and without .pth hooks."""
    layer.mkdir()
    site_packages = Path(sysconfig.get_paths()["purelib"])
    for entry in site_packages.iterdir():
        if _OURS.match(entry.name) or entry.suffix == ".pth" or entry.name == "__pycache__":
            continue
        (layer / entry.name).symlink_to(entry)


def _wheel_requirements(wheel: Path) -> list:
    """The Requires-Dist of a wheel, without optional extras."""
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(name for name in archive.namelist() if name.endswith(".dist-info/METADATA"))
        lines = archive.read(metadata).decode("utf8").splitlines()
    return [line.split(":", 1)[1].strip() for line in lines
            if line.startswith("Requires-Dist:") and "extra ==" not in line]


def _run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{command} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


@pytest.fixture(scope="module")
def release_venv(tmp_path_factory, tiny_release):
    """A fresh venv with the tiny release's two wheels installed; (python, venv dir, work dir)."""
    work = tmp_path_factory.mktemp("install")
    pipeline_wheel, library_wheel = build_release_wheels(
        tiny_release, work / "packages", work / "dist", name="bio_electra", version="0.0.1")
    env_dir = work / "venv"
    from_index = os.environ.get("SPACY_BIOLM_INSTALL_DEPS") == "index"
    # With the layer, pip comes from it too (a venv's own bundled setuptools would shadow the layer's).
    venv.create(env_dir, with_pip=from_index)
    python = env_dir / "bin" / "python"
    target = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    if from_index:
        _run([str(python), "-m", "pip", "install", "--quiet", *_wheel_requirements(library_wheel)])
    else:
        _link_dependency_layer(work / "dependency_layer")
        (Path(target) / "dependency_layer.pth").write_text(str(work / "dependency_layer") + "\n", encoding="utf8")
    _run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--find-links", str(library_wheel.parent),
          "--find-links", str(pipeline_wheel.parent), "en_bio_electra", "spacy-biolm"])
    return python, env_dir, work


def _venv_env() -> dict:
    # No PYTHONPATH (it could name this checkout); offline as everywhere in the tests.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env["HF_HUB_OFFLINE"] = "1"
    return env


# After the release check, README's python blocks in order, in one namespace (a block may use the
# `nlp` of the one before, as a reader would); a failing block prints its traceback and stops.
_RUN_README = """
import traceback
namespace = {}
for i, block in enumerate(json.load(open("readme_blocks.json"))):
    try:
        exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)
    except Exception:
        print(f"README block {i + 1} failed:\\n{traceback.format_exc()}")
        break
    print(f"README block {i + 1} ran")
"""


@pytest.fixture(scope="module")
def venv_output(release_venv, tiny_release) -> tuple:
    """One process in the venv (its imports cost more than the work): the release on a text and a
    question, then README's python blocks, in a project directory where the task pipelines the
    snippets load by path (training/gad/model-last, ...) are the tiny ones. (stdout, venv dir, blocks)."""
    python, env_dir, work = release_venv
    project = work / "project"
    for task, path in [("relations", "training/gad/model-last"), ("answer_span", "training/answer_span/model-last")]:
        shutil.copytree(tiny_release.parent / task, project / path)
    blocks = readme_python_blocks()
    (project / "readme_blocks.json").write_text(json.dumps(blocks), encoding="utf8")
    result = _run([str(python), "-c", _RUN_RELEASE + _RUN_README], cwd=project, env=_venv_env())
    return result.stdout, env_dir, blocks


def test_release_wheels_install_in_a_fresh_venv_and_run_every_component(venv_output):
    stdout, env_dir, _ = venv_output
    report = json.loads(next(line for line in stdout.splitlines() if line.startswith("{")))
    assert Path(report["spacy_biolm"]).resolve().is_relative_to(env_dir.resolve()), report["spacy_biolm"]
    assert not Path(report["spacy_biolm"]).resolve().is_relative_to(REPO)
    assert report["version"] == __version__
    assert f"spacy-biolm=={__version__}" in report["requirements"]
    assert report["pipe_names"] == ["sentencizer", "transformer", "ner", "ner_gene", "ner_chemical", "ner_species", "ner_cell",
                                    "relation_extractor", "relation_chemprot", "hallmarks"]
    assert report["hallmarks"] == sorted(HALLMARKS)  # nlp(text).cats: the 10 hallmarks of cancer
    assert report["disabled"] == ["yes_no", "answer_span", "answer_reranker"]
    assert report["tokens"] == 9 and report["encoded"] and report["has_ents"]
    assert isinstance(report["relations"], list)
    assert report["cats"] == ["no", "yes"]
    assert report["answers"] >= 1 and report["ranked"] == 2


def test_readme_python_snippets_run_against_the_installed_release(venv_output):
    stdout, _, blocks = venv_output
    assert len(blocks) >= 4 and any('spacy.load("en_bio_electra")' in block for block in blocks)
    ran = [line for line in stdout.splitlines() if line.startswith("README block ")]
    assert ran == [f"README block {i + 1} ran" for i in range(len(blocks))], stdout


def test_readme_installs_both_wheels():
    readme = (REPO / "README.md").read_text(encoding="utf8")
    assert re.search(r"pip install dist/spacy_biolm-\S+\.whl", readme)
    assert "en_bio_electra-0.2.0-py3-none-any.whl" in readme
