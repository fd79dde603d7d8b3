"""No evaluation text in the pretraining text the project builds.

The detector first (it must find a sentence whatever the tokenisation, and only a whole one);
then the project's own corpora: the text `collect-text` (projects/pretraining) writes from the sources it names,
checked against every HoC sentence and the dev/test sentences of the NER corpora."""

import re

import pytest

from spacy_biolm.pretraining.leakage import (
    evaluation_files_sentences,
    evaluation_sentences,
    find_leaks,
    ngram_index,
    words_of,
)
from spacy_biolm.pretraining.text import collect_text
from spacy_biolm.project_steps import load_project
from spacy_biolm.testing import REPO, SHARED_DATA

TOKENISED = "Ghrelin was identified in the stomach as an endogenous ligand for the receptor ( GHS-R ) ."


def test_a_sentence_is_found_whatever_its_tokenisation_and_line_breaks(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("Background first. Ghrelin was identified in the stomach as an endogenous\n"
                    "ligand for the receptor (GHS-R). Then more.\n\nAnother document entirely about other things here.\n")
    index = ngram_index([text])
    partial = "Ghrelin was identified in the stomach as an endogenous ligand for the GHS-R receptor in rats ."
    short = "Then more ."
    assert find_leaks(index, [("hoc", TOKENISED), ("hoc", partial), ("hoc", short)]) == [("hoc", TOKENISED)]


# The root's commands and projects/pretraining's (which reads the root's assets as ../../assets/).
COMMANDS = {command["name"]: command for project in (REPO, REPO / "projects" / "pretraining")
            for command in load_project(project)["commands"]}


def _sources(command: str, excluded: bool = False):
    """The asset paths a project command reads (with ``excluded``: those it passes to
    ``--exclude``), mapped into the mirror."""
    script = " ".join(COMMANDS[command]["script"])
    paths = re.findall(r"(--exclude )?(?:\.\./\.\./)?(assets/[^\s\"',\]]+)", script)
    return [SHARED_DATA / path.split("/", 1)[1] for flag, path in paths if bool(flag) == excluded]


def test_the_continued_pretraining_corpus_is_biomed_text_not_an_evaluation_set():
    plus = [str(p) for p in _sources("pretrain-plus")]
    assert plus and all("/pretraining/biomed_text/" in p for p in plus), plus
    for command in COMMANDS.values():
        if "pretrain run" in " ".join(command["script"]) or "collect-text" in " ".join(command["script"]):
            script = " ".join(command["script"]).replace("--exclude ../../assets/hoc_raw", "")
            assert "hoc.jsonl" not in script and "hoc_raw" not in script, command["name"]


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="needs the corpus mirror in ../shared/data")
def test_no_evaluation_sentence_is_in_the_pretraining_text_the_project_builds(tmp_path):
    sources = _sources("collect-text")
    assert len(sources) >= 6 and all(p.is_file() for p in sources), sources
    excluded = _sources("collect-text", excluded=True)
    text = tmp_path / "text.txt"
    stats = collect_text(sources, text, exclude={tuple(words_of(s)) for _, s in evaluation_files_sentences(excluded)})
    assert stats.total("excluded") > 0  # the NER benchmarks repeat sentences across splits
    index = ngram_index([text])
    hoc = SHARED_DATA / "hoc_raw"  # the corpus's upstream tree, as the project fetches it
    ner = [SHARED_DATA / "ner" / name / layout / f"{split}.tsv" for name, layout in
           (("NCBI-disease", "mtl_iob"), ("BC2GM", "mtl_iob"), ("LINNAEUS", "mtl_iob"), ("JNLPBA", "biobert"))
           for split in ("devel", "test")]
    checked = list(evaluation_sentences(hoc=[hoc], conll=ner))
    assert len(checked) > 17000 + 10000
    assert find_leaks(index, checked) == []
    assert {p.name for p in excluded} >= {"hoc_raw", "devel.tsv", "test.tsv"}
    # The check can fail: HoC text collected as pretraining text (as encoder-plus once did) is found.
    leaked_text = tmp_path / "with_hoc.txt"
    collect_text([SHARED_DATA / "pretraining" / "hoc_abstracts" / "hoc.jsonl"], leaked_text)
    assert len(find_leaks(ngram_index([leaked_text]), checked)) > 10000
