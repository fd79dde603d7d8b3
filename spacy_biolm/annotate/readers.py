"""Input shards of a corpus to annotate, read as ``(id, text)`` records.

An input *shard* is one file; its records become one output shard (see :mod:`.shards`). Three
formats, told apart by the file name:

* ``*.jsonl`` (``*.jsonl.gz``): one JSON object a line with a string or integer ``"id"`` and a
  string ``"text"``; blank lines are skipped.
* ``*.txt`` (``*.txt.gz``): one document a line (an abstract, a paragraph); its id is
  ``<file name>:<line number>``. A blank line is an empty document.
* ``*.xml.gz`` / ``*.xml``: a PubMed baseline or update file; one record per ``PubmedArticle``,
  id = its PMID, text = the title, then the abstract's paragraphs, separated by spaces (a
  ``PubmedBookArticle`` is a reject: book records are not read).

A record that cannot be read (malformed JSON, a missing id, an article without a PMID, broken
XML) is a :class:`Reject` naming the file and line; reading goes on with the next record (broken
XML ends the file: nothing after the break can be parsed). Nothing is dropped silently: every
line or article is either a record or a reject.
"""

import gzip
import json
import xml.sax
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator, List, Union

__all__ = ["Record", "Reject", "INPUT_SUFFIXES", "input_format", "find_input_shards", "read_shard"]

#: File name endings of the formats read, and the format each names.
INPUT_SUFFIXES = {
    ".jsonl": "jsonl", ".jsonl.gz": "jsonl",
    ".txt": "text", ".txt.gz": "text",
    ".xml": "pubmed", ".xml.gz": "pubmed",
}


@dataclass(frozen=True)
class Record:
    """One document to annotate; ``line`` is where it starts in its file (1-based)."""

    id: str
    text: str
    line: int


@dataclass(frozen=True)
class Reject:
    """A record that could not be read: where it is and why."""

    path: str
    line: int
    reason: str

    def to_dict(self) -> dict:
        return asdict(self)


def input_format(path: Path) -> str:
    """``"jsonl"``, ``"text"`` or ``"pubmed"`` for a shard's file name; ValueError otherwise."""
    name = Path(path).name.lower()
    for suffix, kind in sorted(INPUT_SUFFIXES.items(), key=lambda item: -len(item[0])):
        if name.endswith(suffix):
            return kind
    raise ValueError(f"{path}: not an input shard; expected a file ending in {', '.join(INPUT_SUFFIXES)}")


def find_input_shards(inputs: Iterable[Union[str, Path]]) -> List[Path]:
    """The shards named by ``inputs``: files as given, folders searched recursively for files with an
    input suffix (sorted). A missing path, a file of another format or no shard at all is an error."""
    shards: List[Path] = []
    for given in inputs:
        path = Path(given)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and _has_input_suffix(p))
            if not found:
                raise ValueError(f"{path}: no input shards in this folder (files ending in {', '.join(INPUT_SUFFIXES)})")
            shards.extend(found)
        elif path.is_file():
            input_format(path)
            shards.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or folder")
    if not shards:
        raise ValueError("no input given")
    return list(dict.fromkeys(shards))


def _has_input_suffix(path: Path) -> bool:
    try:
        input_format(path)
    except ValueError:
        return False
    return True


def read_shard(path: Path) -> Iterator[Union[Record, Reject]]:
    """The records and rejects of one shard, in file order."""
    path = Path(path)
    kind = input_format(path)
    if kind == "pubmed":
        yield from _read_pubmed(path)
        return
    reader = _read_jsonl_line if kind == "jsonl" else _read_text_line
    with _open_binary(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                yield Reject(str(path), number, f"not UTF-8: {error}")
                continue
            item = reader(path, number, line)
            if item is not None:
                yield item


def _open_binary(path: Path):
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def _read_text_line(path: Path, number: int, line: str) -> Record:
    return Record(f"{path.name}:{number}", line, number)


def _read_jsonl_line(path: Path, number: int, line: str):
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        return Reject(str(path), number, f"invalid JSON: {error}")
    if not isinstance(value, dict):
        return Reject(str(path), number, f"expected a JSON object with 'id' and 'text', got {type(value).__name__}")
    record_id, text = value.get("id"), value.get("text")
    if isinstance(record_id, bool) or not isinstance(record_id, (str, int)) or record_id == "":
        return Reject(str(path), number, f"'id' must be a non-empty string or an integer, got {record_id!r}")
    if not isinstance(text, str):
        return Reject(str(path), number, f"'text' must be a string, got {type(text).__name__}")
    return Record(str(record_id), text, number)


# The element whose text each capture state collects.
_CAPTURED = {"PMID": "pmid", "ArticleTitle": "title", "AbstractText": "abstract"}


class _PubmedHandler(xml.sax.ContentHandler):
    """Collects the PMID, title and abstract of each PubmedArticle as the parser streams by."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = str(path)
        self.items: List[Union[Record, Reject]] = []
        self.locator = None
        self._article_line = 0
        self._stack: List[str] = []
        self._pmid = None
        self._title: List[str] = []
        self._abstract: List[List[str]] = []
        self._capture = None  # "pmid", "title" or "abstract" while inside one of them

    def setDocumentLocator(self, locator):  # noqa: N802 (SAX's name)
        self.locator = locator

    def startElement(self, name, attrs):  # noqa: N802
        parent = self._stack[-1] if self._stack else None
        self._stack.append(name)
        if name in ("PubmedArticle", "PubmedBookArticle"):
            self._article_line = self.locator.getLineNumber() if self.locator else 0
            self._pmid, self._title, self._abstract, self._capture = None, [], [], None
        elif name == "PMID" and parent == "MedlineCitation" and self._pmid is None:
            self._pmid, self._capture = [], "pmid"
        elif name == "ArticleTitle" and parent == "Article":
            self._capture = "title"
        elif name == "AbstractText" and parent == "Abstract" and "Article" in self._stack:
            self._abstract.append([])
            self._capture = "abstract"

    def characters(self, content):
        if self._capture == "pmid":
            self._pmid.append(content)
        elif self._capture == "title":
            self._title.append(content)
        elif self._capture == "abstract":
            self._abstract[-1].append(content)

    def endElement(self, name):  # noqa: N802
        self._stack.pop()
        if self._capture is not None and self._capture == _CAPTURED.get(name):
            self._capture = None
        if name == "PubmedBookArticle":
            self.items.append(Reject(self.path, self._article_line, "PubmedBookArticle (a book record) is not read"))
        elif name == "PubmedArticle":
            pmid = "".join(self._pmid or []).strip()
            if not pmid:
                self.items.append(Reject(self.path, self._article_line, "PubmedArticle without a MedlineCitation/PMID"))
                return
            parts = [" ".join("".join(self._title).split())]
            parts += [" ".join("".join(chunks).split()) for chunks in self._abstract]
            self.items.append(Record(pmid, " ".join(p for p in parts if p), self._article_line))


def _read_pubmed(path: Path) -> Iterator[Union[Record, Reject]]:
    handler = _PubmedHandler(path)
    parser = xml.sax.make_parser()
    parser.setFeature(xml.sax.handler.feature_external_ges, False)  # never fetch a DTD
    parser.setContentHandler(handler)
    handler.setDocumentLocator(parser)  # expat's reader is its own locator; feed() does not hand it over
    with _open_binary(path) as handle:
        try:
            for chunk in iter(lambda: handle.read(1 << 16), b""):
                parser.feed(chunk)
                yield from handler.items
                handler.items.clear()
            parser.close()
        except xml.sax.SAXParseException as error:
            yield from handler.items
            yield Reject(str(path), error.getLineNumber(),
                         f"malformed XML ({error.getMessage()}); the rest of the file after this line is not read")
            return
        except (OSError, EOFError) as error:  # a truncated or corrupt .gz
            yield from handler.items
            yield Reject(str(path), handler.locator.getLineNumber() if handler.locator else 0,
                         f"unreadable file ({error}); the rest of the file is not read")
            return
    yield from handler.items
