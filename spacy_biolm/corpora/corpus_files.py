"""What the registered corpus readers share: checked arguments, the first ``limit`` items, and the
Doc the pipeline predicts on.

spaCy only: imported through the ``spacy_readers`` entry points.
"""

import json
from itertools import islice
from pathlib import Path
from typing import Iterable, Iterator, List, Tuple, TypeVar, Union

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..errors import CorpusFormatError

__all__ = ["existing_corpus_file", "corpus_file_list", "check_limit", "first", "unannotated_copy", "read_docbin"]

T = TypeVar("T")


def existing_corpus_file(path: Union[str, Path, None], reader: str, what: str) -> Path:
    """``path`` as a Path; a clear error when it is missing (None) or names no file.

    reader: the reader's name for the message (``"QACorpus"``); what: the kind of file
    (``"QA DocBin"``).
    """
    if path is None:
        raise ValueError(f"{reader} needs the path of a {what}; got None")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    return path


def corpus_file_list(path: Union[str, Path, None], reader: str, what: str) -> List[Path]:
    """The DocBins ``path`` names: the file itself, or every ``.spacy`` file under a folder, sorted
    (as ``spacy.Corpus.v1`` reads a folder), so a training set can join several converted sets.
    Errors as ``existing_corpus_file``, and for a folder without DocBins."""
    if path is not None and Path(path).is_dir():
        files = sorted(Path(path).rglob("*.spacy"))
        if not files:
            raise FileNotFoundError(f"{reader}: no {what} (.spacy) in the folder {path}")
        return files
    return [existing_corpus_file(path, reader, what)]


def read_docbin(path: Path, vocab: Vocab) -> Iterator[Doc]:
    """The Docs of the DocBin at ``path``, with their user data, read lazily.

    A file that is not a DocBin (truncated, another format) and a Doc whose strings the DocBin's
    string table lacks (it was built with another vocabulary and its strings were not saved) are
    a :class:`~spacy_biolm.errors.CorpusFormatError` naming the file and the Doc's index, instead of
    spaCy's bare "Can't retrieve string for hash" from deep inside training.
    """
    try:
        docbin = DocBin().from_disk(path)
    except Exception as error:  # zlib, msgpack, missing keys: all mean "not a DocBin we can read"
        raise CorpusFormatError(path, None, f"not a readable DocBin (.spacy) file ({type(error).__name__}: {error})") from error
    docs = docbin.get_docs(vocab)
    index = 0
    while True:
        try:
            doc = next(docs)
        except StopIteration:
            return
        except KeyError as error:
            raise CorpusFormatError(
                path, None,
                f"Doc {index} of {len(docbin)}: a string is missing from the DocBin's string table ({error.args[0]}); "
                "it was built with another vocabulary without its strings. Write it again with DocBin.add/to_disk "
                "(the spacy-biolm converters do)",
            ) from None
        yield doc
        index += 1


def check_limit(limit: int) -> int:
    """``limit`` when it is 0 (no limit) or a positive integer; ValueError otherwise."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ValueError(f"limit must be 0 (no limit) or a positive integer, got {limit!r}")
    return limit


def first(items: Iterable[T], limit: int) -> Iterator[T]:
    """The first ``limit`` items (all of them when ``limit`` is 0), read lazily."""
    return iter(items) if limit == 0 else islice(items, limit)


def unannotated_copy(reference: Doc, keep_sentences: bool = False) -> Doc:
    """A Doc with the reference's words and spaces (and with ``keep_sentences`` its sentence
    starts) but no annotation, for the pipeline to predict on.

    Reusing the gold tokens (instead of ``nlp.make_doc(text)``) keeps the alignment one-to-one, so
    no gold span is lost or shifted by tokenizer differences.
    """
    sent_starts = None
    if keep_sentences and reference.has_annotation("SENT_START"):
        sent_starts = [bool(token.is_sent_start) for token in reference]
    return Doc(
        reference.vocab,
        words=[token.text for token in reference],
        spaces=[bool(token.whitespace_) for token in reference],
        sent_starts=sent_starts,
    )


def json_lines(path: Union[str, Path]) -> Iterator[Tuple[int, dict]]:
    """(line number, object) of every non-empty line of a JSON-lines file; a line that is not a
    JSON object is a CorpusFormatError naming ``path:line``."""
    with Path(path).open(encoding="utf8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise CorpusFormatError(path, number, f"not a JSON object ({err.msg})") from None
            if not isinstance(record, dict):
                raise CorpusFormatError(path, number, f"not a JSON object (a {type(record).__name__})")
            yield number, record
