"""Question-answering corpora -> spaCy Docs carrying their question, and the reader for training.

Formats:

* ``yesno``: BioASQ yes/no TSV as Bio-ELECTRA ships it (header ``yesno_label  question
  ideal_answer``; 1 = yes). One Doc per row: the passage, ``doc.cats`` {"yes", "no"}.
* ``squad``: SQuAD v1.1 JSON (Bio-ELECTRA's and BioBERT's BioASQ factoid files). One Doc per
  (question, context) pair: gold answers in ``doc.spans["answers"]`` (exact character offsets in
  ``attrs["char_offsets"]``), their texts in ``doc._.gold_answers``; ``doc._.question_id`` is the
  BioASQ question id (the ``_001``/``:1`` snippet suffix removed), so a question's snippets group.
  With a BioASQ golden file (``--golden``), the gold answers are the golden exact answers of the
  question (all synonyms) instead: BioASQ test files have no answers inside.
* ``reranking``: answer-candidate TSV (header ``label  question  answer_candidate``). One Doc per
  question with its candidates as sentences (or chunks of ``sents_per_doc`` candidates, the same
  question id on each), relevant ones in ``doc.spans["relevant_sents"]``.
* ``snippets``: a SQuAD v1.1 JSON of BioASQ snippets read as reranking Docs: one Doc per question,
  its own snippets the relevant candidates and snippets of other questions the irrelevant ones
  (``snippet_reranking_docs``). BioASQ's factoid training set has about 50 times the relevant
  sentences of the answer-candidate TSVs.
* ``boolq`` and ``squad-reranking``: the transfer sets of issue 44 (BoolQ yes/no JSON lines;
  SQuAD/COVID-QA paragraphs read as reranking Docs), see ``corpora.qa_transfer``.

``convert_qa``'s ``exclude`` drops the test questions (by id or text) in every format and, with
``exclude_ngram`` (default 13 for the transfer formats, off for the BioASQ ones, whose training
and test snippets come from the same abstracts by design), every example whose question or passage
shares that many consecutive words with any text of the excluded files.

Every bad record raises ``CorpusFormatError`` naming the file, line or example id. Spacy only
(no torch): the reader is registered through an entry point.
"""

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc, DocBin, SpanGroup
from spacy.training import Example
from spacy.util import registry

from ..errors import CorpusFormatError
from ..doc_data import copy_question, make_question_doc, question_group
from .corpus_files import check_limit, corpus_file_list, first, read_docbin, unannotated_copy

__all__ = [
    "QA_FORMATS",
    "TRANSFER_FORMATS",
    "yesno_tsv_to_docs",
    "squad_json_to_docs",
    "reranking_tsv_to_docs",
    "snippet_reranking_docs",
    "read_qa_docs",
    "convert_qa",
    "convert_qa_corpora",
    "question_keys",
    "QACorpus",
    "create_qa_reader",
    "bioasq_question_id",
]

QA_FORMATS = ("yesno", "squad", "reranking", "snippets", "boolq", "squad-reranking")
#: Formats whose ``exclude`` also drops 13-word overlaps with the excluded files by default.
TRANSFER_FORMATS = ("boolq", "squad-reranking")
_SNIPPET_SUFFIX = re.compile(r"(_\d+|:\d+)$")


def bioasq_question_id(pair_id: str) -> str:
    """The BioASQ question id of a (question, snippet) pair id: ``5c5f..._001`` / ``5c5f...:3`` -> ``5c5f...``."""
    return _SNIPPET_SUFFIX.sub("", pair_id)


def _tsv_rows(path: Path, header: Sequence[str]) -> Iterator[Tuple[int, List[str]]]:
    with Path(path).open(encoding="utf8", newline="") as f:
        lines = f.read().split("\n")
    if not lines or lines[0].rstrip("\r").split("\t") != list(header):
        raise CorpusFormatError(path, 1, f"expected the header {chr(9).join(header)!r}, got {lines[0][:80]!r}")
    for number, line in enumerate(lines[1:], start=2):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(header):
            raise CorpusFormatError(path, number, f"expected {len(header)} tab-separated fields, got {len(fields)}")
        yield number, fields


def _label(path: Path, number: int, value: str) -> int:
    if value.strip() not in ("0", "1"):
        raise CorpusFormatError(path, number, f"label must be 0 or 1, got {value!r}")
    return int(value)


def _question(path: Path, where, question: str) -> str:
    if not question.strip():
        raise CorpusFormatError(path, where if isinstance(where, int) else None, f"empty question ({where})")
    return question.strip()


def yesno_tsv_to_docs(path: Union[str, Path], nlp: Language) -> Iterator[Doc]:
    """BioASQ yes/no TSV -> Docs (passage = ideal answer, ``cats`` from the label)."""
    path = Path(path)
    for number, (label, question, passage) in _tsv_rows(path, ("yesno_label", "question", "ideal_answer")):
        value = _label(path, number, label)
        doc = make_question_doc(nlp, _question(path, number, question), passage, question_id=f"{path.stem}:{number}")
        doc.cats = {"yes": float(value), "no": float(1 - value)}
        yield doc


def _load_json(path: Path):
    try:
        return json.loads(Path(path).read_text(encoding="utf8"))
    except json.JSONDecodeError as err:
        raise CorpusFormatError(path, err.lineno, f"not valid JSON: {err.msg}") from None


def bioasq_golden_answers(path: Union[str, Path]) -> Dict[str, List[str]]:
    """``{question id: [acceptable answers]}`` from a BioASQ golden file (factoid and list
    questions: all synonyms of the exact answer; yes/no: ``["yes"]`` or ``["no"]``)."""
    path = Path(path)
    data = _load_json(path)
    if not isinstance(data, dict) or "questions" not in data:
        raise CorpusFormatError(path, None, "a BioASQ golden file has a top-level 'questions' list")
    answers: Dict[str, List[str]] = {}
    for question in data["questions"]:
        exact = question.get("exact_answer")
        if exact is None or "id" not in question:
            continue
        if isinstance(exact, str):
            exact = [exact]
        flat: List[str] = []
        for item in exact:
            flat.extend(item if isinstance(item, list) else [item])
        answers[question["id"]] = [a for a in flat if isinstance(a, str) and a.strip()]
    return answers


def _squad_pairs(path: Path) -> Iterator[Tuple[str, str, str, dict]]:
    """(context, pair id, question, qa record) of every question of a SQuAD JSON, checked."""
    data = _load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise CorpusFormatError(path, None, "a SQuAD file has a top-level 'data' list")
    for article in data["data"]:
        for paragraph in article.get("paragraphs", []):
            context = paragraph.get("context")
            if not isinstance(context, str):
                raise CorpusFormatError(path, None, f"a paragraph has no 'context' string: {str(paragraph)[:80]}")
            for qa in paragraph.get("qas", []):
                pair_id = str(qa.get("id", ""))
                question = qa.get("question") or ""
                if not question.strip():
                    raise CorpusFormatError(path, None, f"example {pair_id!r}: empty question")
                yield context, pair_id, question, qa


def _squad_answers(path: Path, pair_id: str, context: str, qa: dict) -> List[Tuple[int, int, str]]:
    """(start_char, end_char, text) of every answer of a SQuAD question, each checked against its context."""
    answers = []
    for answer in qa.get("answers", []):
        text, start = answer.get("text"), answer.get("answer_start")
        if not isinstance(text, str) or not isinstance(start, int):
            raise CorpusFormatError(path, None, f"example {pair_id!r}: answer needs 'text' and an integer 'answer_start': {answer}")
        end = start + len(text)
        if context[start:end] != text:
            raise CorpusFormatError(
                path, None,
                f"example {pair_id!r}: answer {text!r} does not match the context at offset {start} "
                f"(found {context[start:end]!r})",
            )
        answers.append((start, end, text))
    return answers


def squad_json_to_docs(
    path: Union[str, Path], nlp: Language, golden: Optional[Union[str, Path]] = None,
    max_passage_words: int = 0, seed: int = 0,
) -> Iterator[Doc]:
    """SQuAD v1.1 JSON -> Docs with gold answer spans (and golden answers when ``golden`` is given).

    max_passage_words: a context of more words than this (a COVID-QA article: median 3,479) becomes
        the passage of whole sentences around its answers, at most that many words, placed at random
        (seeded per question with ``seed``) so the answer is not always in the middle
        (``corpora.qa_transfer.answer_passage``); 0 keeps every context whole. For training sets
        only: a model is tested on the whole context, which the component reads in windows.
    """
    path = Path(path)
    golden_answers = bioasq_golden_answers(golden) if golden else None
    sentences_of: Dict[str, List[Tuple[int, int]]] = {}  # the questions of an article share its sentences
    for context, pair_id, question, qa in _squad_pairs(path):
        answers = _squad_answers(path, pair_id, context, qa)
        passage_start, passage = 0, context
        if max_passage_words and answers and len(context.split()) > max_passage_words:
            from .qa_transfer import answer_passage, paragraph_sentences

            if context not in sentences_of:
                sentences_of[context] = paragraph_sentences(nlp, context)
            passage_start, passage_end = answer_passage(
                sentences_of[context], context, [(s, e) for s, e, _ in answers], max_passage_words, random.Random(f"{seed}:{pair_id}")
            )
            passage = context[passage_start:passage_end]
            answers = [(s - passage_start, e - passage_start, text) for s, e, text in answers if s >= passage_start and e <= passage_end]
        doc = make_question_doc(nlp, question.strip(), passage, question_id=bioasq_question_id(pair_id))
        spans, offsets, texts = [], [], []
        for start, end, text in answers:
            span = doc.char_span(start, end, alignment_mode="expand")
            if span is None or (start, end) in offsets:
                continue
            spans.append(span)
            offsets.append((start, end))
            texts.append(text)
        doc.spans["answers"] = SpanGroup(doc, name="answers", spans=spans, attrs={"char_offsets": [list(o) for o in offsets]})
        if golden_answers is not None:
            if doc._.question_id not in golden_answers:
                raise CorpusFormatError(golden, None, f"no golden answer for question {doc._.question_id!r} (example {pair_id!r} of {path})")
            doc._.gold_answers = golden_answers[doc._.question_id]
        else:
            doc._.gold_answers = list(dict.fromkeys(texts))
        doc.user_data["qa_pair_id"] = pair_id
        if passage_start:
            doc.user_data["context_offset"] = passage_start
        yield doc


def reranking_tsv_to_docs(path: Union[str, Path], nlp: Language, sents_per_doc: int = 0) -> Iterator[Doc]:
    """Answer-candidate TSV -> one Doc per question (or per ``sents_per_doc`` candidates)."""
    path = Path(path)
    questions: Dict[str, List[Tuple[int, int, str]]] = {}
    for number, (label, question, candidate) in _tsv_rows(path, ("label", "question", "answer_candidate")):
        value = _label(path, number, label)
        question = _question(path, number, question)
        if not candidate.strip():
            raise CorpusFormatError(path, number, "empty answer candidate")
        questions.setdefault(question, []).append((number, value, candidate.strip()))
    for question, rows in questions.items():
        qid = "rerank:" + hashlib.sha1(question.encode("utf8")).hexdigest()[:12]
        size = sents_per_doc if sents_per_doc > 0 else len(rows)
        for first in range(0, len(rows), size):
            chunk = rows[first : first + size]
            doc = make_question_doc(nlp, question, [c for _, _, c in chunk], question_id=qid)
            relevant = [s for s, (_, value, _) in zip(doc.sents, chunk) if value == 1]
            doc.spans["relevant_sents"] = SpanGroup(doc, name="relevant_sents", spans=relevant)
            yield doc


_WORD = re.compile(r"[a-z0-9][a-z0-9-]{3,}")


def _content_words(text: str) -> Set[str]:
    """Lower-cased words of four or more characters: the overlap that picks hard negatives."""
    return set(_WORD.findall(text.lower()))


def _squad_snippets(path: Path) -> Dict[str, Tuple[str, List[str]]]:
    """``{BioASQ question id: (question, [distinct snippets])}`` of a SQuAD JSON, in file order."""
    questions: Dict[str, Tuple[str, List[str]]] = {}
    for context, pair_id, question, _ in _squad_pairs(path):
        _, snippets = questions.setdefault(bioasq_question_id(pair_id), (question.strip(), []))
        if context.strip() and context.strip() not in snippets:
            snippets.append(context.strip())
    return questions


def snippet_reranking_docs(
    path: Union[str, Path], nlp: Language, snippets_per_question: int = 8, seed: int = 0,
    held_out_keys: Set[str] = frozenset(),
) -> Iterator[Doc]:
    """BioASQ snippets (SQuAD JSON) -> reranking Docs, one per question.

    The candidates are up to ``snippets_per_question`` of the question's own snippets (relevant:
    BioASQ's experts chose them as answering it) and as many snippets of other questions
    (irrelevant): half those sharing the most words with the question, so that the negatives are
    on topic as the retrieved candidates of a real reranking set are, half drawn at random. The
    candidates are shuffled (a tie never favours the relevant ones). The snippets of questions
    whose id or lower-cased text is in ``held_out_keys`` (test questions, which ``convert_qa``
    then drops) are never negatives. Deterministic for a ``seed``.
    """
    path = Path(path)
    if snippets_per_question < 1:
        raise ValueError(f"snippets_per_question must be at least 1, got {snippets_per_question}")
    questions = _squad_snippets(path)
    pool = [
        (qid, snippet) for qid, (question, snippets) in questions.items()
        if not ({qid, _normal_question(question)} & set(held_out_keys)) for snippet in snippets
    ]
    pool_words = [_content_words(snippet) for _, snippet in pool]
    rng = random.Random(seed)
    for qid, (question, snippets) in questions.items():
        relevant = snippets[:snippets_per_question]
        own = set(snippets)
        others = [i for i, (other, snippet) in enumerate(pool) if other != qid and snippet not in own]
        words = _content_words(question)
        n_hard = min(len(others), snippets_per_question // 2 + snippets_per_question % 2)
        by_overlap = sorted(others, key=lambda i: -len(words & pool_words[i]))
        hard = by_overlap[:n_hard]
        rest = by_overlap[n_hard:]
        chosen = hard + rng.sample(rest, min(len(rest), snippets_per_question - n_hard))
        negatives = list(dict.fromkeys(pool[i][1] for i in chosen))
        candidates = [(text, 1) for text in relevant] + [(text, 0) for text in negatives]
        rng.shuffle(candidates)
        doc = make_question_doc(nlp, question, [text for text, _ in candidates], question_id=qid)
        doc.spans["relevant_sents"] = SpanGroup(
            doc, name="relevant_sents", spans=[s for s, (_, label) in zip(doc.sents, candidates) if label == 1]
        )
        yield doc


def read_qa_docs(fmt: str, path: Union[str, Path], nlp: Language, **options) -> Iterator[Doc]:
    """Docs of a QA corpus file in one of ``QA_FORMATS``."""
    if fmt == "yesno":
        return yesno_tsv_to_docs(path, nlp)
    if fmt == "squad":
        return squad_json_to_docs(path, nlp, golden=options.get("golden"), max_passage_words=options.get("max_passage_words", 0),
                                  seed=options.get("seed", 0))
    if fmt == "reranking":
        return reranking_tsv_to_docs(path, nlp, sents_per_doc=options.get("sents_per_doc", 0))
    if fmt == "snippets":
        return snippet_reranking_docs(path, nlp, seed=options.get("seed", 0), held_out_keys=options.get("held_out_keys", frozenset()))
    if fmt == "boolq":
        from .qa_transfer import boolq_jsonl_to_docs

        return boolq_jsonl_to_docs(path, nlp)
    if fmt == "squad-reranking":
        from .qa_transfer import squad_reranking_docs

        return squad_reranking_docs(path, nlp, negatives=options.get("negatives", 2), seed=options.get("seed", 0),
                                    max_candidates=options.get("max_candidates", 0))
    raise ValueError(f"unknown QA format {fmt!r}; expected one of {QA_FORMATS}")


def _normal_question(text: str) -> str:
    return " ".join(text.lower().split())


def _question_keys(doc: Doc) -> Set[str]:
    keys = {_normal_question(doc._.question or "")}
    if doc._.question_id is not None:
        keys.add(str(doc._.question_id))
    return keys


def question_file_format(path: Union[str, Path]) -> str:
    """The QA format of a corpus file whose questions are to be excluded: SQuAD for ``.json``,
    otherwise the TSV's header tells yes/no from answer candidates."""
    path = Path(path)
    if path.suffix == ".json":
        return "squad"
    if path.suffix == ".jsonl":
        return "boolq"
    with path.open(encoding="utf8") as f:
        return "yesno" if f.readline().startswith("yesno_label") else "reranking"


def question_keys(fmt: str, path: Union[str, Path]) -> Set[str]:
    """The questions of a corpus file (texts, lower-cased, and ids), read without tokenising."""
    path = Path(path)
    keys: Set[str] = set()
    if fmt in ("squad", "snippets", "squad-reranking"):
        data = _load_json(path)
        for question in data.get("questions", []) if isinstance(data, dict) else []:  # a BioASQ golden file
            if isinstance(question, dict):
                keys |= {_normal_question(str(question.get("body") or "")), str(question.get("id", ""))} - {""}
        for article in data.get("data", []) if isinstance(data, dict) else []:
            for paragraph in article.get("paragraphs", []):
                for qa in paragraph.get("qas", []):
                    keys |= {_normal_question(qa.get("question") or ""), bioasq_question_id(str(qa.get("id", "")))}
        return keys
    if fmt == "boolq":
        with path.open(encoding="utf8") as f:
            return {_normal_question(str(json.loads(line).get("question", ""))) for line in f if line.strip()}
    header = {"yesno": ("yesno_label", "question", "ideal_answer"), "reranking": ("label", "question", "answer_candidate")}
    if fmt not in header:
        raise ValueError(f"unknown QA format {fmt!r}; expected one of {QA_FORMATS}")
    return {_normal_question(fields[1]) for _, fields in _tsv_rows(path, header[fmt])}


def convert_qa(
    fmt: str,
    input_path: Union[str, Path],
    output_path: Union[str, Path],
    nlp: Language,
    golden: Optional[Union[str, Path]] = None,
    exclude: Sequence[Union[str, Path]] = (),
    dev_output: Optional[Union[str, Path]] = None,
    dev_fraction: float = 0.1,
    sents_per_doc: int = 0,
    seed: int = 0,
    limit: int = 0,
    exclude_ngram: Optional[int] = None,
    negatives: int = 2,
    max_candidates: int = 0,
    max_passage_words: int = 0,
) -> Dict[str, int]:
    """Convert a QA corpus file to a DocBin (user data kept, so the questions travel along).

    exclude: QA files (any format, told by ``question_file_format``) whose questions (by id or
        by text) must not be in the output, e.g. the test set when converting a training set
        that overlaps it.
    exclude_ngram: also drop the examples whose question or passage (the Doc text) shares this
        many consecutive words with any text of the ``exclude`` files (0: off; None: 13 for the
        ``TRANSFER_FORMATS``, 0 for the others).
    negatives: squad-reranking: sentences of other paragraphs added to each question.
    max_candidates: squad-reranking: at most this many sentences of the question's own paragraph
        (the relevant and the most on-topic ones; 0: all).
    max_passage_words: squad: contexts longer than this become the sentences around their answers
        (see ``squad_json_to_docs``; 0: whole contexts).
    dev_output: also write a development DocBin of ``dev_fraction`` of the *questions* (all
        snippets of a question go to the same side), drawn with ``seed``.
    limit: keep only the first ``limit`` questions (0: all), for quick runs.
    Returns counts of Docs and questions written and excluded.
    """
    from .decontamination import DEFAULT_NGRAM, NgramIndex

    excluded_keys: Set[str] = set()
    for path in exclude:
        excluded_keys |= question_keys(question_file_format(path), path)
    if exclude_ngram is None:
        exclude_ngram = DEFAULT_NGRAM if fmt in TRANSFER_FORMATS else 0
    overlap = NgramIndex.from_files(list(exclude), n=exclude_ngram) if exclude else NgramIndex(n=0)
    checked: Dict[str, bool] = {}  # the questions of one article share its (long) text

    def overlaps(text: str) -> bool:
        if text not in checked:
            checked[text] = overlap.overlaps(text)
        return checked[text]

    docs: List[Doc] = []
    kept: List[Doc] = []
    seen: Set[str] = set()
    options = {"golden": golden, "sents_per_doc": sents_per_doc, "seed": seed, "held_out_keys": excluded_keys,
               "negatives": negatives, "max_candidates": max_candidates, "max_passage_words": max_passage_words}
    for doc in read_qa_docs(fmt, input_path, nlp, **options):
        if limit and question_group(doc) not in seen and len(seen) == limit:
            break
        docs.append(doc)
        if not (_question_keys(doc) & excluded_keys) and not (overlaps(doc._.question) or overlaps(doc.text)):
            kept.append(doc)
            seen.add(question_group(doc))
    groups = list(dict.fromkeys(question_group(doc) for doc in kept))
    dev_groups: Set[str] = set()
    if dev_output is not None:
        if not 0 < dev_fraction < 1:
            raise ValueError(f"dev_fraction must be in (0, 1), got {dev_fraction}")
        rng = random.Random(seed)
        dev_groups = set(rng.sample(groups, max(1, round(len(groups) * dev_fraction))))
    train = [doc for doc in kept if question_group(doc) not in dev_groups]
    dev = [doc for doc in kept if question_group(doc) in dev_groups]
    for docs_out, path in ((train, output_path), (dev, dev_output)):
        if path is None:
            continue
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        DocBin(docs=docs_out, store_user_data=True).to_disk(path)
    return {
        "docs": len(train),
        "questions": len(groups) - len(dev_groups),
        "dev_docs": len(dev),
        "dev_questions": len(dev_groups),
        "excluded_docs": len(docs) - len(kept),
        "excluded_questions": len({question_group(d) for d in docs}) - len(groups),
    }


def convert_qa_corpora(assets: Union[str, Path], output_dir: Union[str, Path], nlp: Language, limit: int = 0) -> Dict[str, Dict[str, int]]:
    """The project's QA corpora, converted in one go and without test leakage.

    From ``assets`` (laid out as ``../shared/data``) to ``output_dir``:

    * ``yesno/{train,dev,test}.spacy``: Bio-ELECTRA's yes/no train (a tenth of it held out as dev)
      and test split.
    * ``factoid/{train,dev}.spacy``: BioBERT's BioASQ 7b factoid training set without the 81
      questions of Bio-ELECTRA's dev.json (a tenth held out as dev); ``factoid/test.spacy``:
      Bio-ELECTRA's dev.json, the paper's test set; ``factoid/test_bioasq7b.spacy``: the BioASQ 7b
      test snippets with the golden answers.
    * ``reranking/train.spacy``: the factoid training set's snippets as reranking Docs
      (``snippet_reranking_docs``), without the questions of either test set;
      ``reranking/dev.spacy``: Bio-AnswerFinder's dev.tsv without the 21 questions it shares with
      the test set, one Doc per question (all 79: a dev set of 8, as a tenth gave, chose the
      checkpoint on noise and shipped a reranker below its untrained start);
      ``reranking/answerfinder_{train,dev}.spacy``: the same 79 questions, two thirds to train on
      and a third to choose on (the root's reranker: the snippets teach which question a text is
      about, which the candidates of one question share, and training on them lowered dev MRR);
      ``reranking/test.spacy``: Bio-ELECTRA's reranking test set, one Doc per question.

    ``limit`` keeps the first questions of each file only (quick runs). Returns the counts.
    """
    assets, out = Path(assets), Path(output_dir)
    yesno = assets / "qa_yesno" / "BioASQ" / "bio_electra"
    factoid = assets / "qa_factoid" / "BioASQ"
    rerank = assets / "reranking" / "BioASQ-reranker"
    jobs = {
        "yesno/train": ("yesno", yesno / "train.tsv", {"dev_output": out / "yesno" / "dev.spacy"}),
        "yesno/test": ("yesno", yesno / "test.tsv", {}),
        "factoid/train": ("squad", factoid / "biobert" / "BioASQ-train-factoid-7b.json",
                          {"exclude": [factoid / "bio_electra" / "dev.json"], "dev_output": out / "factoid" / "dev.spacy"}),
        "factoid/test": ("squad", factoid / "bio_electra" / "dev.json", {}),
        "factoid/test_bioasq7b": ("squad", factoid / "biobert" / "BioASQ-test-factoid-7b.json",
                                  {"golden": factoid / "biobert" / "7B_golden.json"}),
        "reranking/train": ("snippets", factoid / "biobert" / "BioASQ-train-factoid-7b.json",
                            {"exclude": [factoid / "bio_electra" / "dev.json", rerank / "bio_electra" / "test.tsv"]}),
        "reranking/dev": ("reranking", rerank / "bio_answerfinder" / "dev.tsv", {"exclude": [rerank / "bio_electra" / "test.tsv"]}),
        "reranking/answerfinder_train": ("reranking", rerank / "bio_answerfinder" / "dev.tsv",
                                         {"exclude": [rerank / "bio_electra" / "test.tsv"], "dev_fraction": 1 / 3,
                                          "dev_output": out / "reranking" / "answerfinder_dev.spacy"}),
        "reranking/test": ("reranking", rerank / "bio_electra" / "test.tsv", {}),
    }
    return {
        name: convert_qa(fmt, path, out / f"{name}.spacy", nlp, limit=limit, **options)
        for name, (fmt, path, options) in jobs.items()
    }


class QACorpus:
    """Callable corpus over a QA DocBin: Examples whose predicted Doc has the gold Doc's tokens,
    sentence boundaries and question, and no other annotation.

    ``spacy.Corpus.v1`` makes predicted Docs with ``nlp.make_doc(text)``, which would lose the
    question (and the candidate sentences of the reranker), and skips empty passages.
    """

    def __init__(self, path: Union[str, Path], limit: int = 0):
        self.paths = corpus_file_list(path, "QACorpus", "QA DocBin")
        self.limit = check_limit(limit)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        docs = (doc for path in self.paths for doc in read_docbin(path, nlp.vocab))
        for reference in first(docs, self.limit):
            predicted = copy_question(reference, unannotated_copy(reference, keep_sentences=True))
            yield Example(predicted, reference)


@registry.readers("spacy-biolm.QACorpus.v1")
def create_qa_reader(path: Path, limit: int = 0) -> Callable[[Language], Iterable[Example]]:
    """Read a QA DocBin (written by ``spacy-biolm qa convert``) for training or evaluation.

    The predicted Doc of each Example carries the question (``doc._.question``/``question_id``)
    and, for the reranker, the candidate sentences; the reference Doc has the gold annotation.

    Example config::

        [corpora.dev]
        @readers = "spacy-biolm.QACorpus.v1"
        path = ${paths.dev}
        limit = 0

    Args:
        path: a ``.spacy`` file, or a folder: its ``.spacy`` files in sorted order (several
            converted sets trained on together).
        limit: stop after this many Examples; 0 reads them all.
    """
    return QACorpus(path, limit=limit)
