"""Output shards: names, the output folder's checks before any work, atomic writes."""

import json

import pytest
import spacy

from spacy_biolm.annotate.readers import Reject
from spacy_biolm.annotate.records import doc_to_record
from spacy_biolm.annotate.shards import TEMP_MARK, ShardWriter, plan_output_shards, prepare_output_dir
from spacy_biolm.doc_data import Relation, set_relations


def test_output_names_and_collisions(tmp_path):
    shards = plan_output_shards([tmp_path / "a" / "pubmed25n0001.xml.gz", tmp_path / "b.jsonl"], tmp_path / "out")
    assert [s.jsonl.name for s in shards] == ["pubmed25n0001.jsonl", "b.jsonl"]
    assert shards[0].rejects.name == "pubmed25n0001.rejects.jsonl" and shards[0].docbin.name == "pubmed25n0001.spacy"
    with pytest.raises(ValueError, match="would both write"):
        plan_output_shards([tmp_path / "a" / "x.jsonl", tmp_path / "b" / "x.txt"], tmp_path / "out")


def test_unwritable_or_full_output_fails_before_any_work(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError, match="cannot create the output folder"):
        prepare_output_dir(tmp_path / "file" / "out")
    with pytest.raises(OSError, match="not writable"):
        prepare_output_dir("/sys")  # sysfs: no new files, even for root
    with pytest.raises(OSError, match=r"disk is full \(\d+ MiB free, 1000000000 MiB needed"):
        prepare_output_dir(tmp_path / "out", min_free_mb=1e9)
    assert list((tmp_path / "out").iterdir()) == []


def test_rerun_removes_the_temporary_files_a_killed_run_left(tmp_path):
    (tmp_path / f".a.jsonl{TEMP_MARK}abc").write_text("half a shard")
    (tmp_path / "b.jsonl").write_text("finished\n")
    removed = prepare_output_dir(tmp_path)
    assert [p.name for p in removed] == [f".a.jsonl{TEMP_MARK}abc"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.jsonl"]


def test_record_has_entities_relations_and_sentences_by_character_offsets():
    nlp = spacy.blank("en")
    doc = nlp("BRCA1 causes breast cancer. TP53 too.")
    doc.ents = [doc.char_span(0, 5, "Gene"), doc.char_span(13, 26, "Disease")]
    set_relations(doc, [Relation(doc[0:1], doc[2:4], "ASSOCIATION", 0.875)])
    assert doc_to_record("p1", doc)["sentences"] is None  # no sentence boundaries were set
    for token in doc[1:]:
        token.is_sent_start = token.i == 5
    record = doc_to_record("p1", doc)
    assert record == {
        "id": "p1", "text": doc.text,
        "entities": [{"start": 0, "end": 5, "label": "Gene", "text": "BRCA1"},
                     {"start": 13, "end": 26, "label": "Disease", "text": "breast cancer"}],
        "relations": [{"head": {"start": 0, "end": 5}, "tail": {"start": 13, "end": 26}, "label": "ASSOCIATION",
                       "score": 0.875}],
        "sentences": [{"start": 0, "end": 27}, {"start": 28, "end": 37}],
    }
    assert doc_to_record("e", nlp("")) == {"id": "e", "text": "", "entities": [], "relations": [], "sentences": []}


def test_writer_puts_files_in_place_only_on_commit(tmp_path):
    nlp = spacy.blank("en")
    (shard,) = plan_output_shards([tmp_path / "in.jsonl"], tmp_path)
    writer = ShardWriter(shard, docbin=True)
    writer.add("d1", nlp("BRCA1 ."))
    writer.reject(Reject("in.jsonl", 2, "invalid JSON"))
    assert not shard.done and not shard.rejects.exists()
    counts = writer.commit()
    assert counts["documents"] == 1 and counts["rejects"] == 1 and shard.done
    assert json.loads(shard.rejects.read_text()) == {"path": "in.jsonl", "line": 2, "reason": "invalid JSON"}
    assert [d.text for d in spacy.tokens.DocBin().from_disk(shard.docbin).get_docs(nlp.vocab)] == ["BRCA1 ."]
    aborted = ShardWriter(plan_output_shards([tmp_path / "other.txt"], tmp_path)[0])
    aborted.add("x", nlp("x"))
    aborted.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "in.rejects.jsonl", "in.spacy"]
