"""Document classification corpora of your own: JSON lines -> Docs with ``doc.cats``.

One document a line, ``{"text": "...", "labels": ["A", "C"]}`` (the labels that apply) or
``{"text": "...", "cats": {"A": 1, "B": 0, ...}}``. Every Doc gets a value for every label of the
corpus (the union over the file, or the ``labels`` given), as spaCy's ``textcat_multilabel``
needs; a label left out of a ``cats`` record is 0. The result trains ``configs/hoc.cfg`` (or any
``textcat_multilabel`` config) like the Hallmarks-of-Cancer corpus.
"""

from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc

from ..errors import CorpusFormatError
from .corpus_files import json_lines

__all__ = ["read_cats_records", "cats_jsonl_to_docs"]


def read_cats_records(path: Union[str, Path]) -> List[Tuple[int, str, Dict[str, float]]]:
    """(line number, text, {label: 0/1 given}) of every non-empty line; a malformed line, a record
    without a text or with labels of the wrong shape is an error naming ``path:line``."""
    records = []
    for number, record in json_lines(path):
        if not isinstance(record.get("text"), str):
            raise CorpusFormatError(path, number, 'expected {"text": "...", "labels": [...]} or {"text": ..., "cats": {...}}')
        if "cats" in record:
            cats = record["cats"]
            if not isinstance(cats, dict) or any(value not in (0, 1, True, False) for value in cats.values()):
                raise CorpusFormatError(path, number, '"cats" must map each label to 0 or 1')
            given = {str(label): float(value) for label, value in cats.items()}
        elif isinstance(record.get("labels"), list) and all(isinstance(label, str) for label in record["labels"]):
            given = {label: 1.0 for label in record["labels"]}
        else:
            raise CorpusFormatError(path, number, 'needs "labels" (a list of label names) or "cats" ({label: 0 or 1})')
        records.append((number, record["text"], given))
    return records


def cats_jsonl_to_docs(path: Union[str, Path], nlp: Language, labels: Optional[Sequence[str]] = None) -> Iterator[Doc]:
    """Docs of :func:`read_cats_records` with ``doc.cats`` over every label: ``labels`` when given
    (another label in the file is an error naming its line), else every label the file uses."""
    records = read_cats_records(path)
    known = list(labels) if labels else sorted({label for _, _, given in records for label in given})
    if not known:
        raise CorpusFormatError(path, None, "no labels: give --label or records with labels")
    for number, text, given in records:
        unknown = sorted(set(given) - set(known))
        if unknown:
            raise CorpusFormatError(path, number, f"unknown label(s) {unknown}; the corpus's labels are {known}")
        doc = nlp.make_doc(text)
        doc.cats = {label: given.get(label, 0.0) for label in known}
        yield doc
