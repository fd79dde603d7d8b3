"""Input shards: JSONL, plain text and PubMed XML records; every unreadable record a reject with its line."""

import gzip
import json

import pytest

from spacy_biolm.annotate.readers import Record, Reject, find_input_shards, input_format, read_shard

PUBMED = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" "https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">
<PubmedArticleSet>
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">31452104</PMID>
    <Article PubModel="Print">
      <ArticleTitle>BRCA1 mutations in <i>hereditary</i> breast cancer.</ArticleTitle>
      <Abstract>
        <AbstractText Label="BACKGROUND">Germline mutations in BRCA1
          cause breast cancer.</AbstractText>
        <AbstractText Label="RESULTS">TP53 was mutated in 12 of 40 tumours (p &lt; 0.05).</AbstractText>
      </Abstract>
    </Article>
    <CommentsCorrectionsList><CommentsCorrections><PMID Version="1">1234</PMID></CommentsCorrections></CommentsCorrectionsList>
  </MedlineCitation>
</PubmedArticle>
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <Article><ArticleTitle>A citation without its PMID.</ArticleTitle></Article>
  </MedlineCitation>
</PubmedArticle>
<PubmedArticle>
  <MedlineCitation Status="MEDLINE" Owner="NLM">
    <PMID Version="1">31452105</PMID>
    <Article><ArticleTitle>Title only.</ArticleTitle></Article>
  </MedlineCitation>
</PubmedArticle>
<PubmedArticle>
  <MedlineCitation><PMID Version="1">31452106</PMID><Article><ArticleTitle></ArticleTitle></Article></MedlineCitation>
</PubmedArticle>
</PubmedArticleSet>
"""


def test_jsonl_records_and_rejects_with_their_lines(tmp_path):
    path = tmp_path / "a.jsonl"
    lines = [
        json.dumps({"id": "d1", "text": "BRCA1 causes cancer."}),
        "{not json",
        "",
        json.dumps({"id": 7, "text": ""}),  # integer id, empty text: an empty record
        json.dumps(["id", "text"]),
        json.dumps({"text": "no id"}),
        json.dumps({"id": "d9", "text": None}),
        json.dumps({"id": "d10", "text": "naïve T cells"}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    items = list(read_shard(path))
    assert [i for i in items if isinstance(i, Record)] == [
        Record("d1", "BRCA1 causes cancer.", 1), Record("7", "", 4), Record("d10", "naïve T cells", 8)]
    rejects = [i for i in items if isinstance(i, Reject)]
    assert [(r.path, r.line) for r in rejects] == [(str(path), 2), (str(path), 5), (str(path), 6), (str(path), 7)]
    assert "invalid JSON" in rejects[0].reason and "'id'" in rejects[2].reason and "'text'" in rejects[3].reason


def test_invalid_utf8_line_is_a_reject_and_reading_goes_on(tmp_path):
    path = tmp_path / "b.jsonl.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b'{"id": "x", "text": "\xff\xfe"}\n' + json.dumps({"id": "y", "text": "ok"}).encode() + b"\n")
    items = list(read_shard(path))
    assert isinstance(items[0], Reject) and items[0].line == 1 and "UTF-8" in items[0].reason
    assert items[1] == Record("y", "ok", 2)


def test_plain_text_is_one_document_per_line(tmp_path):
    path = tmp_path / "abstracts.txt"
    path.write_text("First abstract.\n\nThird line.\n", encoding="utf8")
    assert list(read_shard(path)) == [Record("abstracts.txt:1", "First abstract.", 1),
                                      Record("abstracts.txt:2", "", 2), Record("abstracts.txt:3", "Third line.", 3)]


def test_pubmed_title_and_abstract_per_citation_pmid_as_id(tmp_path):
    path = tmp_path / "pubmed25n0001.xml.gz"
    with gzip.open(path, "wt", encoding="utf8") as handle:
        handle.write(PUBMED)
    items = list(read_shard(path))
    assert items[0] == Record("31452104", "BRCA1 mutations in hereditary breast cancer. Germline mutations in "
                              "BRCA1 cause breast cancer. TP53 was mutated in 12 of 40 tumours (p < 0.05).", 4)
    assert items[1] == Reject(str(path), 18, "PubmedArticle without a MedlineCitation/PMID")
    assert items[2] == Record("31452105", "Title only.", 23)
    assert items[3] == Record("31452106", "", 29)  # no title, no abstract: an empty record
    assert len(items) == 4


def test_broken_xml_keeps_the_records_before_and_rejects_the_rest(tmp_path):
    path = tmp_path / "broken.xml"
    cut = PUBMED.index("<PubmedArticle>", PUBMED.index("31452105") - 200)
    path.write_text(PUBMED[:cut] + "<PubmedArticle><MedlineCitation><PMID>1</PMID></Oops>\n", encoding="utf8")
    items = list(read_shard(path))
    assert isinstance(items[0], Record) and isinstance(items[1], Reject)
    assert isinstance(items[-1], Reject) and "malformed XML" in items[-1].reason and items[-1].line == 23
    assert len(items) == 3


def test_find_input_shards(tmp_path):
    (tmp_path / "in" / "sub").mkdir(parents=True)
    for name in ("in/b.jsonl", "in/sub/a.txt", "in/sub/c.xml.gz", "in/notes.md"):
        (tmp_path / name).write_text("")
    assert [p.relative_to(tmp_path).as_posix() for p in find_input_shards([tmp_path / "in"])] == [
        "in/b.jsonl", "in/sub/a.txt", "in/sub/c.xml.gz"]
    assert input_format(tmp_path / "x.XML.GZ") == "pubmed"
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        find_input_shards([tmp_path / "missing.jsonl"])
    with pytest.raises(ValueError, match="notes.md: not an input shard"):
        find_input_shards([tmp_path / "in" / "notes.md"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no input shards in this folder"):
        find_input_shards([tmp_path / "empty"])
