"""ChemProt sentences with their words: Bio-ELECTRA's masked rows given back their entity text.

Bio-ELECTRA's ChemProt TSV (the papers' input) replaces every entity by ``BC6ENTC``, ``BC6ENTG``
or ``BC6OTHER``, so a pipeline that finds chemicals and genes itself has nothing to read. SciBERT's
ChemProt file keeps the sentences' words, but only of sentences with a relation, and marks only the
pair of each line. Joined, they give what an end-to-end evaluation needs: the sentence as written,
every chemical and gene mention (a masked occurrence is typed by the rows where it is the target
chemical or gene) and every CPR relation between them.

A masked sentence is matched to a SciBERT text by its words outside the masks, compared without
whitespace (Bio-ELECTRA's text is tokenised, ``AR - target``; SciBERT's is not, ``AR-target``), each
mask standing for the shortest text that lets the rest match. Sentences without a relation are not
in SciBERT's file, and some with one are missing from it: both are counted, never guessed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ..errors import CorpusFormatError
from .corpus_files import json_lines

__all__ = ["MASK", "SCIBERT_MARKERS", "SciBertTexts", "WrittenSentences", "load_scibert_texts", "unmark"]

#: What a masked template holds in place of each entity (``_grouped_chemprot``'s key).
MASK = "\x00"

#: SciBERT's markers of a line's pair, ``<< first >>`` and ``[[ second ]]`` in text order.
SCIBERT_MARKERS = re.compile(r"<< (.+?) >>|\[\[ (.+?) \]\]")
_SPACE = re.compile(r"\s+")


def unmark(text: str) -> str:
    """SciBERT's line text without its ``<< >>`` and ``[[ ]]`` markers."""
    return SCIBERT_MARKERS.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), text)


def load_scibert_texts(path: Union[str, Path]) -> List[str]:
    """The distinct unmarked sentences of a SciBERT ChemProt JSON-lines file, in file order; a line
    that is not an object with a string ``text`` raises CorpusFormatError naming it."""
    texts: Dict[str, None] = {}
    for line, record in json_lines(path):
        if not isinstance(record.get("text"), str):
            raise CorpusFormatError(path, line, "expected an object with a string field 'text'")
        texts[unmark(record["text"])] = None
    return list(texts)


def _squeezed(text: str) -> str:
    return _SPACE.sub("", text)


class SciBertTexts:
    """Finds the written sentence of a masked template among SciBERT's texts."""

    def __init__(self, texts: Iterable[str]):
        self.texts = [(text, _squeezed(text)) for text in texts]

    def find(self, template: str) -> Optional[Tuple[str, List[Tuple[int, int]]]]:
        """``(text, [(start, end) of each mask's text])`` of the one SciBERT text ``template`` (entities
        as :data:`MASK`) matches, or None when none or several do."""
        parts = template.split(MASK)
        literal = max((_squeezed(p) for p in parts), key=len)
        any_space = r"\s*"
        pattern = re.compile(any_space + (any_space + "(.+?)" + any_space).join(
            any_space.join(re.escape(c) for c in _squeezed(part)) for part in parts) + any_space, re.DOTALL)
        found = []
        for text, squeezed in self.texts:
            if literal in squeezed:
                match = pattern.fullmatch(text)
                if match is not None:
                    found.append((text, [match.span(i) for i in range(1, len(parts))]))
        return found[0] if len(found) == 1 else None


Mention = Tuple[int, int, str]  # start, end, entity type


class WrittenSentences:
    """Masked sentences found in SciBERT's file, merged by their text: one sentence is several masked
    templates when its mentions nest (``alanine`` inside ``alanine-glyoxylate aminotransferase``)."""

    def __init__(self):
        self._by_text: Dict[str, Tuple[Dict[Mention, None], Dict[Tuple[Mention, Mention, str], int]]] = {}

    def add(self, text: str, mentions: Iterable[Mention], relations: Iterable[Tuple[Mention, Mention, str, int]]) -> None:
        """One template's mentions and ``(chemical, gene, label, line of its row)`` relations."""
        known, related = self._by_text.setdefault(text, ({}, {}))
        known.update(dict.fromkeys(mentions))
        for chemical, gene, label, line in relations:
            related.setdefault((chemical, gene, label), line)

    def sentences(self) -> Iterator[Tuple[str, List[Mention], List[Tuple[int, int, str]], List[int]]]:
        """``(text, mentions, relations as (head, tail, label) indices into mentions, lines of relations
        left out)`` of each sentence in the order first seen. Where mentions overlap the longest stays
        (then the first), as ``doc.ents`` holds no overlaps; a relation on one left out is reported by
        its row's line."""
        for text, (known, related) in self._by_text.items():
            kept: List[Mention] = []
            for mention in sorted(known, key=lambda m: (m[0] - m[1], m[0])):
                if all(mention[1] <= other[0] or other[1] <= mention[0] for other in kept):
                    kept.append(mention)
            kept.sort()
            index = {mention: i for i, mention in enumerate(kept)}
            specs = [(index[head], index[tail], label) for (head, tail, label) in related if head in index and tail in index]
            nested = [line for (head, tail, _), line in related.items() if head not in index or tail not in index]
            yield text, kept, specs, nested
