"""Rule-based abbreviation detection after Schwartz & Hearst (2003).

Schwartz, A. S. & Hearst, M. A. (2003). "A simple algorithm for identifying abbreviation
definitions in biomedical text." Pacific Symposium on Biocomputing 8:451-462.

The algorithm looks for a parenthesised expression next to a candidate definition:

* ``long form (SF)``: the text inside the parentheses is a short-form candidate; the long form
  is found by matching the short form's letters and digits right to left against the words just
  before the opening parenthesis;
* ``SF (long form)``: when the parenthesised text is too long to be a short form, the word just
  before the parenthesis is tried as the short form and the parenthesised text as its long form.

Everything works on character offsets of ``doc.text`` and the results are mapped back onto tokens
with ``Doc.char_span(..., alignment_mode="expand")``, so the component gives the same answers with
spaCy's English tokenizer and with ``spacy-biolm.BioTokenizer.v1`` (which makes every punctuation
character its own token, e.g. ``"( APC )"``).

This module is imported on every ``spacy.blank``/``spacy.load`` through the ``spacy_factories``
entry point, so it only depends on spaCy and the standard library.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Dict, Iterable, Iterator, List, Optional, Tuple

from spacy.language import Language
from spacy.tokens import Doc, Span

from ...doc_data import ABBREVIATIONS_EXTENSION
from ...versions import check_built_version

__all__ = ["Abbreviation", "AbbreviationDetector", "make_abbreviation_detector"]


# Short-form limits (Schwartz & Hearst): 2-10 characters, at most two words.
SF_MIN_CHARS = 2
SF_MAX_CHARS = 10
SF_MAX_WORDS = 2

# Whitespace around punctuation is dropped when measuring a short form, so the corpus-style
# "IL - 2" counts like "IL-2".
_SPACED_PUNCT = re.compile(r"\s*([^\w\s])\s*")
# A "word" for the long-form word limit: split on whitespace and hyphens, and only chunks with a
# letter or digit count (so the corpus-style "IL - 2" is two words, like "IL-2").
_WORD_SPLIT = re.compile(r"[\s\-\u2010\u2011\u2012\u2013]+")
# A likely sentence end: ., ! or ? followed by whitespace and then something that is not a
# lower-case letter ("graft vs. host" is not a boundary, "cancer. The" is).
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[^\sa-z])")
_NON_SPACE = re.compile(r"\S+")


@dataclass(frozen=True)
class Abbreviation:
    """One short form found in a doc, linked to the long form that defines it.

    ``short``: the short-form span, e.g. ``APC``. For a definition it is the span inside (or just
    before) the parentheses; for a later mention (``find_all_mentions=True``) it is the mention.

    ``long``: the long-form span of the definition, e.g. ``adenomatous polyposis coli``; later
    mentions point to the long form of the closest preceding definition of the same short form.
    """

    short: Span
    long: Span


def _word_count(text: str) -> int:
    return sum(1 for w in _WORD_SPLIT.split(text) if any(c.isalnum() for c in w))


def _compact(text: str) -> str:
    return _SPACED_PUNCT.sub(r"\1", text)


def _alnum_count(text: str) -> int:
    return sum(1 for c in text if c.isalnum())


def _is_short_form(text: str) -> bool:
    """Schwartz & Hearst's short-form test: 2-10 characters, at most two words, starts with a
    letter or digit and contains at least one letter."""
    compact = _compact(text)
    if not SF_MIN_CHARS <= len(compact) <= SF_MAX_CHARS:
        return False
    if not compact[0].isalnum() or not any(c.isalpha() for c in compact):
        return False
    words = [w for w in compact.split() if any(c.isalnum() for c in w)]
    return len(words) <= SF_MAX_WORDS


def _max_long_form_words(short: str) -> int:
    n = _alnum_count(short)
    return min(n + 5, n * 2)


def _strip(text: str, start: int, end: int) -> Tuple[int, int]:
    """Shrink ``[start, end)`` so that it has no leading/trailing whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _match_long_form(short: str, text: str, start: int, end: int) -> Optional[int]:
    """Match the short form's letters and digits right to left against ``text[start:end]``.

    Every letter/digit of the short form must be found (case-insensitively) in order, the first
    one at the beginning of a word. Returns the character offset where the long form starts (the
    beginning of the whitespace-delimited word holding the first match), or ``None``.
    """
    li = end - 1
    chars = [c.lower() for c in short if c.isalnum()]
    if not chars:
        return None
    for si in range(len(chars) - 1, -1, -1):
        c = chars[si]
        while li >= start:
            if text[li].lower() == c and (
                si > 0 or li == start or not text[li - 1].isalnum()
            ):
                break
            li -= 1
        if li < start:
            return None
        if si > 0:
            li -= 1
    # li is the match of the first short-form character: back up to the start of its word.
    while li > start and not text[li - 1].isspace():
        li -= 1
    return li


def _valid_pair(short: str, long: str) -> bool:
    """Schwartz & Hearst's final checks on a (short, long) candidate pair."""
    if len(_compact(long)) <= len(_compact(short)):
        return False
    if _word_count(long) > _max_long_form_words(short):
        return False
    # The long form must not contain the short form as a word of its own.
    if re.search(r"(?<!\w)" + re.escape(short) + r"(?!\w)", long):
        return False
    return True


def _paren_pairs(text: str) -> List[Tuple[int, int]]:
    """Offsets ``(open, close)`` of balanced round parentheses, any depth; unmatched ones are
    ignored."""
    stack: List[int] = []
    pairs: List[Tuple[int, int]] = []
    for i, ch in enumerate(text):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            pairs.append((stack.pop(), i))
    pairs.sort()
    return pairs


class AbbreviationDetector:
    """Find abbreviation definitions (Schwartz & Hearst, 2003) and their later mentions.

    Sets ``doc._.abbreviations`` to a list of :class:`Abbreviation` ``(short, long)`` pairs of
    spans, sorted by the short form's position: one per definition (``long form (SF)`` or
    ``SF (long form)``) and, with ``find_all_mentions``, one per later whole-token, case-sensitive
    mention of a defined short form, linked to the long form of its closest preceding definition.

    With ``propagate_entities``, a definition whose long form is, covers or lies inside an entity of
    ``doc.ents`` passes that entity's label on to every mention of its short form (the definition's
    own short form included) that does not overlap an entity already; existing entities are never
    changed. Add the component after ``ner`` for this (``nlp.add_pipe("biolm_abbreviations",
    after="ner", config={"propagate_entities": True})``).

    The component is stateless: its settings live in the pipeline config, so pipelines that contain
    it round-trip through ``nlp.to_disk``/``spacy.load``.
    """

    def __init__(
        self,
        nlp: Optional[Language] = None,
        name: str = "biolm_abbreviations",
        *,
        propagate_entities: bool = False,
        find_all_mentions: bool = True,
    ) -> None:
        self.name = name
        self.propagate_entities = propagate_entities
        self.find_all_mentions = find_all_mentions

    # -- public API ---------------------------------------------------------------------------

    def __call__(self, doc: Doc) -> Doc:
        """Annotate one doc in place and return it. Empty and whitespace-only docs are returned
        untouched."""
        if not doc.text.strip():
            return doc
        definitions = self.find_definitions(doc)
        found = list(definitions)
        if self.find_all_mentions and definitions:
            found.extend(self._mentions(doc, definitions))
        found.sort(key=lambda a: (a.short.start, a.short.end))
        doc._.set(ABBREVIATIONS_EXTENSION, found)
        if self.propagate_entities and found:
            self._propagate(doc, definitions, found)
        return doc

    def pipe(self, stream: Iterable[Doc], batch_size: int = 128) -> Iterator[Doc]:
        """Annotate a stream of docs (``batch_size`` is accepted for spaCy's API; the component
        works doc by doc)."""
        for doc in stream:
            yield self(doc)

    def find_definitions(self, doc: Doc) -> List[Abbreviation]:
        """The abbreviation definitions of ``doc`` (no mentions), in text order, without setting
        anything on the doc."""
        text = doc.text
        results: List[Abbreviation] = []
        sent_starts = self._sentence_starts(doc)
        for open_i, close_i in _paren_pairs(text):
            pair = self._definition_at(text, open_i, close_i, sent_starts)
            if pair is None:
                continue
            (s0, s1), (l0, l1) = pair
            short = doc.char_span(s0, s1, alignment_mode="expand")
            long = doc.char_span(l0, l1, alignment_mode="expand")
            if short is None or long is None or _overlaps(short, long):
                continue
            results.append(Abbreviation(short=short, long=long))
        return results

    # -- definitions --------------------------------------------------------------------------

    @staticmethod
    def _sentence_starts(doc: Doc) -> List[int]:
        """Character offsets where a sentence starts: from the doc's sentence boundaries when it
        has them, plus a punctuation heuristic (long forms never cross these)."""
        starts = {0}
        if doc.has_annotation("SENT_START"):
            starts.update(tok.idx for tok in doc if tok.is_sent_start)
        starts.update(m.end() for m in _SENTENCE_END.finditer(doc.text))
        return sorted(starts)

    @staticmethod
    def _window_start(text: str, pos: int, sent_starts: List[int]) -> int:
        """Left limit of the text a long form before ``pos`` may use: the sentence start, or just
        after the closest parenthesis before ``pos``, whichever is later."""
        sent = sent_starts[bisect_right(sent_starts, pos) - 1]
        paren = max(text.rfind("(", 0, pos), text.rfind(")", 0, pos)) + 1
        return max(sent, paren)

    def _definition_at(
        self, text: str, open_i: int, close_i: int, sent_starts: List[int]
    ) -> Optional[Tuple[Tuple[int, int], Tuple[int, int]]]:
        in0, in1 = _strip(text, open_i + 1, close_i)
        if in0 >= in1 or "(" in text[in0:in1] or ")" in text[in0:in1]:
            return None
        win0 = self._window_start(text, open_i, sent_starts)

        # long form (SF): the short form is the parenthesised text up to a ',' or ';'
        # ("(HNPCC; ref. 3)" -> "HNPCC").
        cut = re.search(r"[,;]", text[in0:in1])
        s0, s1 = _strip(text, in0, in0 + cut.start() if cut else in1)
        short = text[s0:s1]
        if s0 < s1 and _is_short_form(short):
            long_span = self._long_form_before(text, short, win0, open_i)
            if long_span is not None:
                return (s0, s1), long_span
            return None

        # SF (long form): the parenthesised text is too long for a short form; try the word
        # before the parenthesis. Deviation from the paper, to keep ordinary words
        # ("treatment (radiation therapy and ...)") out: the short form needs a capital letter.
        w0, w1 = _strip(text, win0, open_i)
        if w0 >= w1:
            return None
        last = list(_NON_SPACE.finditer(text, w0, w1))[-1]
        s0, s1 = last.start(), last.end()
        while s0 < s1 and not text[s0].isalnum():
            s0 += 1
        while s1 > s0 and not text[s1 - 1].isalnum():
            s1 -= 1
        short = text[s0:s1]
        if s0 >= s1 or not _is_short_form(short) or not any(c.isupper() for c in short):
            return None
        if _word_count(text[in0:in1]) > _max_long_form_words(short):
            return None
        l0 = _match_long_form(short, text, in0, in1)
        if l0 is None or not _valid_pair(short, text[l0:in1]):
            return None
        return (s0, s1), (l0, in1)

    @staticmethod
    def _long_form_before(text: str, short: str, win0: int, open_i: int) -> Optional[Tuple[int, int]]:
        """Search the at most min(|SF| + 5, 2|SF|) words before the parenthesis for the long
        form of ``short`` (|SF| = letters and digits in the short form)."""
        w0, w1 = _strip(text, win0, open_i)
        if w0 >= w1:
            return None
        limit = _max_long_form_words(short)
        chunks = list(_NON_SPACE.finditer(text, w0, w1))
        start, words = w1, 0
        for chunk in reversed(chunks):
            words += _word_count(chunk.group())
            if words > limit:
                break
            start = chunk.start()
        if start >= w1:
            return None
        l0 = _match_long_form(short, text, start, w1)
        if l0 is None or not _valid_pair(short, text[l0:w1]):
            return None
        return l0, w1

    # -- mentions -----------------------------------------------------------------------------

    @staticmethod
    def _mentions(doc: Doc, definitions: List[Abbreviation]) -> List[Abbreviation]:
        """Whole-token, case-sensitive occurrences of defined short forms after their definition,
        each linked to the closest preceding definition of the same short form."""
        by_key: Dict[Tuple[str, ...], List[Tuple[int, Abbreviation]]] = {}
        for abbr in definitions:
            key = tuple(t.text for t in abbr.short if not t.is_space)
            if not key:
                continue
            # A mention must come after the whole definition ("long (SF)" or "SF (long)").
            end = max(abbr.short.end, abbr.long.end)
            by_key.setdefault(key, []).append((end, abbr))
        defined = [a.short for a in definitions]
        words = [(t.i, t.text) for t in doc if not t.is_space]
        texts = [w for _, w in words]
        found: List[Abbreviation] = []
        for key, defs in by_key.items():
            defs.sort(key=lambda d: d[0])
            n = len(key)
            for j in range(len(texts) - n + 1):
                if texts[j] != key[0] or tuple(texts[j : j + n]) != key:
                    continue
                start, end = words[j][0], words[j + n - 1][0] + 1
                prior = [a for d_end, a in defs if d_end <= start]
                if not prior:
                    continue
                span = doc[start:end]
                if any(_overlaps(span, s) for s in defined):
                    continue
                found.append(Abbreviation(short=span, long=prior[-1].long))
        return found

    # -- entities -----------------------------------------------------------------------------

    @staticmethod
    def _entity_for(long: Span, ents: Tuple[Span, ...]) -> Optional[Span]:
        """The entity the long form stands for: one with exactly its tokens, else one covering
        it, else the longest one inside it."""
        best: Optional[Span] = None
        for ent in ents:
            if ent.start == long.start and ent.end == long.end:
                return ent
        for ent in ents:
            if ent.start <= long.start and ent.end >= long.end:
                return ent
        for ent in ents:
            if ent.start >= long.start and ent.end <= long.end:
                if best is None or len(ent) > len(best):
                    best = ent
        return best

    def _propagate(self, doc: Doc, definitions: List[Abbreviation], found: List[Abbreviation]) -> None:
        ents = tuple(doc.ents)
        if not ents:
            return
        labels: Dict[Tuple[int, int], str] = {}
        for abbr in definitions:
            ent = self._entity_for(abbr.long, ents)
            if ent is not None and ent.label_:
                labels[(abbr.long.start, abbr.long.end)] = ent.label_
        if not labels:
            return
        taken = bytearray(len(doc))
        for ent in ents:
            taken[ent.start : ent.end] = b"\x01" * len(ent)
        new: List[Span] = []
        for abbr in found:
            label = labels.get((abbr.long.start, abbr.long.end))
            s = abbr.short
            if label is None or any(taken[s.start : s.end]):
                continue
            taken[s.start : s.end] = b"\x01" * len(s)
            new.append(Span(doc, s.start, s.end, label=label))
        if new:
            doc.set_ents(new, default="unmodified")


def _overlaps(a: Span, b: Span) -> bool:
    return a.start < b.end and b.start < a.end


@Language.factory(
    "biolm_abbreviations",
    default_config={"propagate_entities": False, "find_all_mentions": True},
    assigns=["doc._.abbreviations"],
)
def make_abbreviation_detector(
    nlp: Language, name: str, propagate_entities: bool, find_all_mentions: bool
) -> AbbreviationDetector:
    """Factory of the ``biolm_abbreviations`` pipeline component.

    ``nlp.add_pipe("biolm_abbreviations")`` adds a Schwartz & Hearst (2003) abbreviation detector
    that fills ``doc._.abbreviations`` with :class:`Abbreviation` ``(short, long)`` span pairs.

    Config:
        propagate_entities (bool): give every short-form mention not already in an entity the label
            of the entity its long form stands for (run after ``ner``). Default ``False``.
        find_all_mentions (bool): besides the definitions, list every later whole-token,
            case-sensitive mention of a defined short form. Default ``True``.
    """
    check_built_version(nlp.meta)  # the pipeline's recorded spacy-biolm version vs this one
    return AbbreviationDetector(
        nlp, name, propagate_entities=propagate_entities, find_all_mentions=find_all_mentions
    )
