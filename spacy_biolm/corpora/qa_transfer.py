"""General and biomedical QA sets for intermediate (transfer) training -> question Docs.

The sets of ``../shared/data/qa_transfer`` (issue 44), read into the same Docs the BioASQ
converters of ``corpora.qa`` make, so the yes/no, answer-span and reranker configs train on
them unchanged:

* ``boolq``: BoolQ JSON lines (``question``, ``title``, ``answer`` true/false, ``passage``). One
  yes/no Doc per line: the Doc text is the passage exactly as given, ``doc.cats``
  {"yes": 1.0, "no": 0.0} for ``true``; ``doc._.question_id`` is ``<file stem>:<line>`` and the
  Wikipedia title is kept in ``doc.user_data["title"]``, not prepended: the BioASQ yes/no
  passages the model is transferred to have no title, and the Doc text stays the passage.
* ``squad`` (in ``corpora.qa``) reads SQuAD v1.1 and COVID-QA answer spans as they are: one Doc
  per (question, context), the whole context (COVID-QA contexts are full articles; the
  answer_span component windows long passages), every distinct answer in ``doc.spans["answers"]``.
* ``squad-reranking``: SQuAD-style paragraphs -> reranking Docs, one per question
  (``squad_reranking_docs``). The candidates are the sentences of the question's paragraph
  (spaCy's rule-based ``Sentencizer`` on the converter's tokenizer: the project has no other
  sentence splitter below the pretraining layer) plus ``negatives`` on-topic sentences of *other*
  paragraphs of the same article (SQuAD ``title``; COVID-QA has one paragraph per article, so it
  gets none): those sharing the most words with the question, ties broken at random; with
  ``max_candidates`` a long paragraph keeps its relevant and most on-topic sentences only. A sentence
  overlapping an answer span is relevant (``doc.spans["relevant_sents"]``, the reranker's
  ``GOLD_KEY``), all others irrelevant; sentences of other paragraphs holding an answer text are
  never negatives. Candidates are shuffled; the random draws are seeded per question id, so the
  output does not depend on file order or on which questions are excluded.

Decontamination (``convert_qa``'s ``exclude``): besides the test questions themselves (by id or
text), these formats drop by default any example whose question or passage shares a 13-word span
with any text of the excluded files (``corpora.decontamination``). Given every BioASQ test,
golden and reranking-test file of the mirror (line 450 overlaps ``6B4_golden.json`` only), this
drops exactly BoolQ dev lines 450 and 2298, the two the data README names, and nothing of SQuAD
dev or COVID-QA (see projects/qa-reranker/README.md for the commands).
"""

import json
import random
from pathlib import Path
from typing import Dict, Iterator, List, Sequence, Tuple, Union

from spacy.language import Language
from spacy.pipeline import Sentencizer
from spacy.tokens import Doc, SpanGroup

from ..doc_data import make_question_doc
from ..errors import CorpusFormatError
from .corpus_files import json_lines
from .qa import _content_words, _squad_answers, _squad_pairs, bioasq_question_id

__all__ = ["boolq_jsonl_to_docs", "squad_reranking_docs", "paragraph_sentences", "answer_passage"]


def boolq_jsonl_to_docs(path: Union[str, Path], nlp: Language) -> Iterator[Doc]:
    """BoolQ JSON lines -> yes/no Docs (passage, ``cats`` from ``answer``, title in user_data)."""
    path = Path(path)
    for number, record in json_lines(path):
        question, passage, answer = record.get("question"), record.get("passage"), record.get("answer")
        if not isinstance(question, str) or not question.strip():
            raise CorpusFormatError(path, number, "empty or missing 'question'")
        if not isinstance(passage, str) or not passage.strip():
            raise CorpusFormatError(path, number, "empty or missing 'passage'")
        if not isinstance(answer, bool):
            raise CorpusFormatError(path, number, f"'answer' must be true or false, got {answer!r}")
        doc = make_question_doc(nlp, question.strip(), passage, question_id=f"{path.stem}:{number}")
        doc.cats = {"yes": float(answer), "no": float(not answer)}
        doc.user_data["title"] = str(record.get("title") or "")
        yield doc


def paragraph_sentences(nlp: Language, context: str) -> List[Tuple[int, int]]:
    """(start_char, end_char) of the sentences of ``context`` (spaCy's ``Sentencizer`` on
    ``nlp``'s tokens), surrounding whitespace excluded, empty sentences dropped. A boundary with
    no whitespace before it is no sentence boundary ("$1.2 billion", "99.4."): the sentences
    around it are merged."""
    doc = Sentencizer()(nlp.make_doc(context))
    spans: List[Tuple[int, int]] = []
    for sent in doc.sents:
        text = sent.text
        start, end = sent.start_char + len(text) - len(text.lstrip()), sent.start_char + len(text.rstrip())
        if end <= start:
            continue
        if spans and sent.start > 0 and not doc[sent.start - 1].whitespace_ and start == sent.start_char:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return spans


def answer_passage(
    sentences: Sequence[Tuple[int, int]], context: str, answers: Sequence[Tuple[int, int]], max_words: int, rng: random.Random
) -> Tuple[int, int]:
    """(start_char, end_char) in ``context`` of a passage of whole ``sentences`` (their character
    spans, in order) holding the answers, at most ``max_words`` whitespace-separated words.

    The sentences holding the first answer are always in; the others are kept while the passage
    still fits (answers spread over more than ``max_words`` lose the far ones; a single answer
    sentence longer than ``max_words`` is kept whole). The words left over go before and after
    it in a share drawn from ``rng``, so the answer sits anywhere in the passage."""
    if not sentences:
        raise ValueError("answer_passage: the context has no sentences")
    words = [len(context[s:e].split()) for s, e in sentences]

    def covering(start: int, end: int) -> Tuple[int, int]:
        inside = [i for i, (s, e) in enumerate(sentences) if s < end and e > start]
        if not inside:  # an answer in the whitespace between sentences: the next sentence
            inside = [min(len(sentences) - 1, sum(1 for s, _ in sentences if s < start))]
        return inside[0], inside[-1]

    first, last = covering(*answers[0])
    for start, end in answers[1:]:
        a, b = covering(start, end)
        if sum(words[min(a, first) : max(b, last) + 1]) <= max_words:
            first, last = min(a, first), max(b, last)
    budget = max_words - sum(words[first : last + 1])
    before = rng.randint(0, max(budget, 0))
    while first > 0 and words[first - 1] <= before:
        first -= 1
        before -= words[first]
        budget -= words[first]
    while last + 1 < len(sentences) and words[last + 1] <= budget:
        last += 1
        budget -= words[last]
    while first > 0 and words[first - 1] <= budget:  # the end of the context came first: fill before
        first -= 1
        budget -= words[first]
    return sentences[first][0], sentences[last][1]


def squad_reranking_docs(
    path: Union[str, Path], nlp: Language, negatives: int = 2, seed: int = 0, max_candidates: int = 0
) -> Iterator[Doc]:
    """SQuAD-style paragraphs -> reranking Docs, one per question with at least one answer.

    Candidates: the sentences of the question's paragraph (relevant: those overlapping an answer
    span) and up to ``negatives`` sentences of other paragraphs of the same article, the most
    on-topic ones (content words shared with the question). ``max_candidates`` (0: no limit)
    caps the paragraph's own sentences for long contexts (a COVID-QA article has ~170-280): the
    relevant ones and the most on-topic others are kept. Deterministic for a ``seed``.
    """
    path = Path(path)
    if negatives < 0 or max_candidates < 0:
        raise ValueError(f"negatives and max_candidates must be 0 or more, got {negatives}, {max_candidates}")
    data = json.loads(path.read_text(encoding="utf8"))
    # Article of each context (SQuAD: title; else the article's position), and its sentences.
    article_of: Dict[str, str] = {}
    for i, article in enumerate(data.get("data", []) if isinstance(data, dict) else []):
        for paragraph in article.get("paragraphs", []):
            if isinstance(paragraph.get("context"), str):
                article_of.setdefault(paragraph["context"], str(article.get("title", i)))
    spans_of: Dict[str, List[Tuple[int, int]]] = {}
    sentences: Dict[str, List[str]] = {}
    by_article: Dict[str, List[str]] = {}
    for context, article in article_of.items():
        spans_of[context] = paragraph_sentences(nlp, context)
        sentences[context] = [context[s:e] for s, e in spans_of[context]]
        by_article.setdefault(article, []).append(context)
    words_of = {sent: _content_words(sent) for sents in sentences.values() for sent in sents}
    for context, pair_id, question, qa in _squad_pairs(path):
        answers = [(start, end) for start, end, _ in _squad_answers(path, pair_id, context, qa)]
        if not answers:
            continue
        candidates = [(context[s:e], any(a < e and b > s for a, b in answers)) for s, e in spans_of[context]]
        rng = random.Random(f"{seed}:{pair_id}")
        question_words = _content_words(question)
        if max_candidates and len(candidates) > max_candidates:
            relevant = [c for c in candidates if c[1]]
            others = sorted((-len(question_words & words_of[text]), rng.random(), text) for text, is_rel in candidates if not is_rel)
            keep = {text for _, _, text in others[: max(0, max_candidates - len(relevant))]}
            candidates = [c for c in candidates if c[1] or c[0] in keep]
        answer_texts = {context[a:b].lower() for a, b in answers}
        own = {text for text, _ in candidates}
        pool = [
            sent for other in by_article.get(article_of[context], []) if other != context for sent in sentences[other]
            if sent not in own and not any(answer in sent.lower() for answer in answer_texts)
        ]
        keyed = sorted((-len(question_words & words_of[sent]), rng.random(), sent) for sent in dict.fromkeys(pool))
        candidates += [(sent, False) for _, _, sent in keyed[:negatives]]
        rng.shuffle(candidates)
        doc = make_question_doc(nlp, question.strip(), [text for text, _ in candidates], question_id=bioasq_question_id(pair_id))
        doc.spans["relevant_sents"] = SpanGroup(
            doc, name="relevant_sents", spans=[s for s, (_, relevant) in zip(doc.sents, candidates) if relevant]
        )
        doc.user_data["qa_pair_id"] = pair_id
        yield doc
