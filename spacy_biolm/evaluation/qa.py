"""Evaluation of the question-answering pipelines and their results tables beside the papers'."""

import json
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from spacy.language import Language
from spacy.training import Example

from ..loading import load_pipeline
from .baselines import (
    bm25_reranking, embeddings_once, frequent_word_answers, majority_yes_no, question_sentence_answers, zero_shot_cosine_reranking,
)
from .seed_summaries import format_mean_std, summarise_score_files
from .tables import markdown_table

__all__ = ["answer_lengths", "evaluate_qa", "evaluate_qa_files", "evaluate_qa_project", "qa_results_table",
           "write_qa_seeds_table", "PROJECT_TEST_SETS"]


def evaluate_qa(
    nlp,
    data_path: Union[str, Path],
    batch_size: int = 16,
    limit: int = 0,
    baselines: Sequence[Callable[[List[Example]], Tuple[str, dict]]] = (),
) -> Dict[str, float]:
    """Run a QA pipeline over a QA DocBin (read with ``spacy-biolm.QACorpus.v1``, so the questions
    stay on the Docs), score it with its components' scorers and time it (``limit``: only the first
    Docs). Each of ``baselines`` (see :mod:`.baselines`) scores its own answers on the same Docs.

    Returns the scores plus ``docs``, ``questions`` (distinct question ids), ``seconds`` (pipeline
    time only), ``docs_per_second``, ``questions_per_second``, ``torch_threads``, ``device`` and
    ``baselines`` ({name: scores}).
    """
    import torch
    from spacy.scorer import Scorer
    from thinc.api import get_current_ops

    from ..corpora.qa import QACorpus
    from ..doc_data import question_group

    examples = list(QACorpus(data_path, limit=limit)(nlp))
    baseline_scores = dict(baseline(examples) for baseline in baselines)
    start = time.perf_counter()
    docs = list(nlp.pipe((eg.predicted for eg in examples), batch_size=batch_size))
    seconds = time.perf_counter() - start
    for eg, doc in zip(examples, docs):
        eg.predicted = doc
    scores = {
        k: v for k, v in Scorer(nlp).score(examples).items() if not isinstance(v, dict) and not k.startswith("token_")
    }
    questions = len({question_group(eg.reference) for eg in examples})
    choice = nlp.meta.get("spacy_biolm", {}).get("reranker_choice")
    if choice:  # which reranker this is (qa choose-reranker): the trained one or its untrained start
        scores["reranker_choice"] = choice
    scores.update(
        docs=len(examples),
        questions=questions,
        seconds=seconds,
        docs_per_second=len(examples) / seconds if seconds else 0.0,
        questions_per_second=questions / seconds if seconds else 0.0,
        torch_threads=torch.get_num_threads(),
        device="gpu" if type(get_current_ops()).__name__ == "CupyOps" else "cpu",
        baselines={name: {k: v for k, v in values.items() if not isinstance(v, dict)} for name, values in baseline_scores.items()},
    )
    return scores


def reranking_baselines(
    encoder: Optional[Union[str, Path]] = None, lexical_weight: float = 0.0
) -> List[Callable[[List[Example]], Tuple[str, dict]]]:
    """The rankings a reranker must beat on the same Docs: BM25 of the question's terms and, with
    ``encoder``, the zero-shot cosine of its mean-pooled embeddings, and with ``lexical_weight``
    > 0 (the reranker's own) the two fused: the reranker untrained."""
    if not encoder:
        return [bm25_reranking]
    embed = embeddings_once(encoder)  # the fused baseline ranks with the plain one's embeddings
    baselines = [bm25_reranking, lambda egs: zero_shot_cosine_reranking(egs, encoder, embed=embed)]
    if lexical_weight > 0:
        baselines.append(lambda egs: zero_shot_cosine_reranking(egs, encoder, lexical_weight=lexical_weight, embed=embed))
    return baselines


def _answer_rerankers(nlp: Language) -> List[str]:
    return [name for name in nlp.pipe_names if nlp.get_pipe_meta(name).factory == "answer_reranker"]


def reranker_lexical_weight(nlp: Language) -> float:
    """The ``lexical_weight`` of ``nlp``'s answer_reranker (0.0 without one)."""
    names = _answer_rerankers(nlp)
    return float(nlp.get_pipe(names[0]).cfg.get("lexical_weight", 0.0)) if names else 0.0


def majority_baseline(train_path: Union[str, Path]) -> Callable[[List[Example]], Tuple[str, dict]]:
    """The yes/no baseline: the more frequent answer of the training DocBin ``train_path``."""
    from spacy.lang.en import English

    from ..corpora.qa import QACorpus

    train = [eg.reference for eg in QACorpus(train_path)(English())]
    return lambda examples: majority_yes_no(examples, train)


#: The answers an answer_span model must beat on the same Docs (``qa evaluate --answer-span-baselines``).
ANSWER_SPAN_BASELINES = (frequent_word_answers, question_sentence_answers)


LEXICAL_WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def lexical_weight_curve(nlp: Language, examples: List[Example], weights: Sequence[float], batch_size: int = 16):
    """The reranker of ``nlp`` on ``examples`` at each lexical weight: ``(name, best weight,
    {weight: dev MRR}, {weight: {question: reciprocal rank}})``. The model runs once; each
    weight re-ranks its margins. Ties go to the smaller weight: no lexical evidence unless it helps."""
    from ..pipes.answer_reranker.scorer import question_reciprocal_ranks

    names = _answer_rerankers(nlp)
    if not names:
        raise ValueError("the pipeline has no answer_reranker component")
    name, reranker = names[0], nlp.get_pipe(names[0])
    docs = [eg.predicted for eg in examples]
    predictions = [reranker.predict(docs[i : i + batch_size]) for i in range(0, len(docs), batch_size)]
    mrr, ranks = {}, {}
    for weight in sorted(weights):
        reranker.cfg["lexical_weight"] = float(weight)
        for i, prediction in zip(range(0, len(docs), batch_size), predictions):
            reranker.set_annotations(docs[i : i + batch_size], prediction)
        mrr[float(weight)] = reranker.score(examples)["rerank_mrr"]
        ranks[float(weight)] = question_reciprocal_ranks(examples, reranker.cfg["spans_key"])
    best = max(mrr, key=lambda w: (mrr[w], -w))
    reranker.cfg["lexical_weight"] = best
    return name, best, mrr, ranks


def store_lexical_weight(nlp: Language, name: str, model_dir: Path) -> None:
    """Write ``nlp``'s reranker settings (its lexical_weight) into the saved pipeline at ``model_dir``."""
    from spacy.util import load_config

    nlp.get_pipe(name).to_disk(model_dir / name)
    config = load_config(model_dir / "config.cfg", interpolate=False)
    config["components"][name]["lexical_weight"] = nlp.get_pipe(name).cfg["lexical_weight"]
    config.to_disk(model_dir / "config.cfg")


def reranking_examples(nlp: Language, dev_path: Union[str, Path]) -> List[Example]:
    """The Examples of a reranking DocBin, read with ``nlp``; an error when it has none."""
    from ..corpora.qa import QACorpus

    examples = list(QACorpus(dev_path)(nlp))
    if not examples:
        raise ValueError(f"{dev_path}: no Docs to tune the lexical weight on")
    return examples


def tune_lexical_weight(
    model_dir: Union[str, Path], dev_path: Union[str, Path], weights: Sequence[float] = LEXICAL_WEIGHTS,
    gpu_id: int = -1, batch_size: int = 16,
) -> Dict[str, object]:
    """Choose the ``answer_reranker``'s ``lexical_weight`` (BM25 beside the model's margins) on a
    reranking dev DocBin and store it in ``model_dir`` (its config.cfg and the component's saved
    settings), so that loading the pipeline ranks with it. The dev MRR of every weight is
    returned (ties go to the smaller weight)."""
    model_dir = Path(model_dir)
    nlp = load_pipeline(model_dir, gpu_id=gpu_id)
    if not _answer_rerankers(nlp):
        raise ValueError(f"{model_dir}: the pipeline has no answer_reranker component")
    examples = reranking_examples(nlp, dev_path)
    name, best, mrr, _ = lexical_weight_curve(nlp, examples, weights, batch_size)
    store_lexical_weight(nlp, name, model_dir)
    return {"component": name, "dev": str(dev_path), "questions": len(examples), "lexical_weight": best,
            "dev_mrr": {str(w): v for w, v in mrr.items()}}


def answer_lengths(corpora: Dict[str, Union[str, Path]], encoder: Union[str, Path]) -> Dict[str, dict]:
    """Per answer-span DocBin (``{name: path}``), the lengths of each question's first gold answer
    in words and in ``encoder``'s wordpieces: median, mean and the share longer than
    ``answer_span``'s default ``max_answer_length`` (no span longer is ever decoded), which tells
    whether a set's answers are entities (BioASQ factoid) or clauses (COVID-QA)."""
    import statistics

    import spacy
    from transformers import AutoTokenizer

    from ..corpora.qa import QACorpus
    from ..pipes.answer_span.component import DEFAULT_MAX_ANSWER_LENGTH

    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    nlp = spacy.blank("en")
    result = {}
    for name, path in corpora.items():
        words, pieces = [], []
        for eg in QACorpus(path)(nlp):
            answers = list(eg.reference.spans.get("answers", []))
            if answers:
                words.append(len(answers[0].text.split()))
                pieces.append(len(tokenizer(answers[0].text, add_special_tokens=False)["input_ids"]))
        if not words:
            raise ValueError(f"{path}: no question with a gold answer span")
        result[name] = {"path": str(path), "questions": len(words), "median_words": statistics.median(words),
                        "mean_words": round(statistics.mean(words), 2), "median_wordpieces": statistics.median(pieces),
                        f"share_over_{DEFAULT_MAX_ANSWER_LENGTH}_wordpieces":
                            round(sum(n > DEFAULT_MAX_ANSWER_LENGTH for n in pieces) / len(pieces), 4)}
    return result


def evaluate_qa_files(
    model: Union[str, Path],
    data_paths: Sequence[Path],
    outputs: Sequence[Path] = (),
    gpu_id: int = -1,
    threads: int = 0,
    batch_size: int = 16,
    limit: int = 0,
    baselines: Sequence[Callable[[List[Example]], Tuple[str, dict]]] = (),
    reranking_encoder: Optional[Union[str, Path]] = None,
) -> Dict[str, Dict[str, float]]:
    """Load ``model`` once and :func:`evaluate_qa` it on each QA DocBin of ``data_paths`` (beside
    ``baselines``, and with ``reranking_encoder`` the :func:`reranking_baselines` of that encoder
    at the pipeline's lexical_weight); with ``outputs`` (one per DocBin), write each one's scores
    there as JSON. Returns ``{data path: scores}``."""
    if outputs and len(outputs) != len(data_paths):
        raise ValueError(f"give one output per DocBin ({len(data_paths)}), got {len(outputs)}")
    nlp = load_pipeline(model, gpu_id=gpu_id, threads=threads)
    if reranking_encoder:
        baselines = [*baselines, *reranking_baselines(reranking_encoder, reranker_lexical_weight(nlp))]
    results = {}
    for i, data_path in enumerate(data_paths):
        results[str(data_path)] = scores = evaluate_qa(nlp, data_path, batch_size=batch_size, limit=limit, baselines=baselines)
        if outputs:
            from ..run_record import write_json

            write_json(outputs[i], scores, device=scores.get("device"))
    return results


def _pct(value: Optional[float]) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def _speed(scores: dict) -> str:
    qps = scores.get("questions_per_second")
    where = "GPU" if scores.get("device") == "gpu" else f"{scores.get('torch_threads')} threads"
    return f"{qps:,.1f} ({where})" if qps else ""


# task -> (title, [(column, our metric key)], paper section, paper metric scale)
_TASKS = {
    "yes_no": (
        "Yes/no (BioASQ, Bio-ELECTRA test split), percent",
        [("P yes", "yes_no_p_yes"), ("R yes", "yes_no_r_yes"), ("F1 yes", "yes_no_f_yes"),
         ("P no", "yes_no_p_no"), ("R no", "yes_no_r_no"), ("F1 no", "yes_no_f_no")],
        ("bio_electra_2020", "yesno_bioasq8b"),
    ),
    "answer_span": (
        "Factoid QA (BioASQ, Bio-ELECTRA dev.json as test), SQuAD exact match / F1, percent",
        [("EM", "answer_em"), ("F1", "answer_f1")],
        ("bio_electra_2020", "qa_factoid_bioasq8b"),
    ),
    "answer_span_bioasq7b": (
        "Factoid QA (BioASQ 7b test, 5 batches, golden answers), strict / lenient accuracy / MRR, percent",
        [("strict", "answer_strict_acc"), ("lenient", "answer_lenient_acc"), ("MRR", "answer_mrr")],
        ("electramed_2021", "qa_bioasq7b"),
    ),
    "answer_span_covid_qa": (
        "Extractive QA (COVID-QA test: 375 questions, each over its whole article), SQuAD exact match / F1, percent",
        [("EM", "answer_em"), ("F1", "answer_f1")],
        ("", ""),  # no paper of ours reports it
    ),
    "answer_reranker": (
        "Answer-sentence reranking (Bio-ELECTRA test set, 100 questions), MRR",
        [("MRR", "rerank_mrr")],
        ("bio_electra_2020", "reranking_bioasq"),
    ),
}


# task -> [(row name, {our metric key: the baseline's key in the same scores})]: baselines that the
# task's scorer reports beside our score.
_SCORER_BASELINES = {
    "answer_reranker": [("random order of the candidates (expected)", {"rerank_mrr": "rerank_mrr_random"})],
}


def _baseline_rows(task: str, scores: dict) -> List[List[str]]:
    """The task's baseline rows: those its scorer reports and those of ``scores["baselines"]``
    (computed on the same Docs by :mod:`.baselines`); empty cells where a baseline lacks a metric."""
    _, columns, _ = _TASKS[task]
    shown = [(title, {key: scores.get(keys[key]) for key in keys}) for title, keys in _SCORER_BASELINES.get(task, [])]
    shown += list(scores.get("baselines", {}).items())
    rows = []
    for title, values in shown:
        cells = [values.get(key) for _, key in columns]
        if any(v is not None for v in cells):
            fmt = (lambda v: f"{v:.3f}") if task == "answer_reranker" else _pct
            rows.append([f"{title} (baseline)", *("" if v is None else fmt(v) for v in cells), ""])
    return rows


def _paper_rows(paper: dict, source: str, section: str, n_columns: int) -> List[List[str]]:
    data = paper.get(source, {}).get(section, {})
    names = paper.get(source, {}).get("models", {})
    rows = []
    if source == "electramed_2021":
        batches = [v for k, v in data.items() if k.startswith("batch")]
        if batches:
            means = [sum(b[i] for b in batches) / len(batches) for i in range(n_columns)]
            rows.append(["ELECTRAMed (base), mean of the 5 batches (paper)", *(f"{v:.2f}" for v in means), ""])
        return rows
    for model, values in data.items():
        if model in ("table", "metrics") or not isinstance(values, list):
            continue
        shown = [f"{v:.3f}" if section == "reranking_bioasq" else f"{v:.2f}" for v in values]
        rows.append([f"{names.get(model.replace('_weighted', ''), model)}{' weighted' if model.endswith('_weighted') else ''} (paper)", *shown, ""])
    return rows


def _read_paper(paper_results: Optional[Path]) -> dict:
    return json.loads(Path(paper_results).read_text(encoding="utf8")) if paper_results and Path(paper_results).is_file() else {}


def _task(task: str):
    if task not in _TASKS:
        raise ValueError(f"unknown QA task {task!r}; expected one of {sorted(_TASKS)}")
    return _TASKS[task]


def qa_results_table(metrics: Dict[str, Path], paper_results: Optional[Path] = None, name: str = "spacy-biolm") -> str:
    """Markdown tables, one per task in ``metrics`` (task -> evaluate-qa JSON), with the papers' rows."""
    paper = _read_paper(paper_results)
    out: List[str] = []
    for task, path in metrics.items():
        title, columns, (source, section) = _task(task)
        scores = json.loads(Path(path).read_text(encoding="utf8"))
        mrr_only = task == "answer_reranker"
        ours = [f"{scores.get(key):.3f}" if mrr_only and scores.get(key) is not None else _pct(scores.get(key)) for _, key in columns]
        header = ["model", *(c for c, _ in columns), "questions/s"]
        out += [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        out.append("| " + " | ".join([f"{name} (ours)", *ours, _speed(scores)]) + " |")
        out += ["| " + " | ".join(row) + " |" for row in _baseline_rows(task, scores)]
        out += ["| " + " | ".join(row) + " |" for row in _paper_rows(paper, source, section, len(columns))]
        out.append("")
    return "\n".join(out)


def write_qa_seeds_table(
    output: Union[str, Path], task: str, rows: Dict[str, Sequence[Path]], paper_results: Optional[Path] = None
) -> str:
    """One QA task's test scores over seeds, from evaluation JSONs already written (one per seed, e.g.
    runs trained side by side on a GPU): each row's mean (std) in the task's columns, then the
    baselines the first file reporting them holds (scored on the same test Docs) and the papers' rows. Writes
    ``output`` (Markdown) and its ``.json`` (the files and summaries); returns the table."""
    title, columns, (source, section) = _task(task)
    results = summarise_score_files(rows, [key for _, key in columns])
    scale, digits = (1.0, 3) if task == "answer_reranker" else (100.0, 2)
    table_rows = [[f"{row} (ours)", *(format_mean_std(result["summary"][key]["mean"], result["summary"][key]["std"], scale, digits)
                                      for _, key in columns), str(len(result["files"]))]
                  for row, result in results.items()]
    # The baselines of the first file that reports them (`qa evaluate-project` scores them; `qa evaluate` may not).
    files = [json.loads(Path(f).read_text(encoding="utf8")) for result in results.values() for f in result["files"]]
    with_baselines = next((scores for scores in files if scores.get("baselines")), {})
    table_rows += _baseline_rows(task, with_baselines) + _paper_rows(_read_paper(paper_results), source, section, len(columns))
    table = f"### {title}, mean (std) over seeds\n\n" + markdown_table(["model", *(c for c, _ in columns), "seeds"], table_rows)
    from ..run_record import RUN_KEY, stamp_json, with_run_comment

    summary = stamp_json({"task": task, "rows": results})  # the table's run: its commit and date
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(with_run_comment(table + "\n", summary[RUN_KEY]), encoding="utf8")
    output.with_suffix(".json").write_text(json.dumps(summary, indent=2), encoding="utf8")
    return table


# The project's QA test sets: metrics name -> (pipeline under training/, DocBin under corpus/qa/).
PROJECT_TEST_SETS = {
    "yes_no": ("yes_no", "yesno/test.spacy"),
    "answer_span": ("answer_span", "factoid/test.spacy"),
    "answer_span_bioasq7b": ("answer_span", "factoid/test_bioasq7b.spacy"),
    "answer_reranker": ("answer_reranker", "reranking/test.spacy"),
}
# The yes/no training set, under corpus/qa/: its majority answer is the yes/no baseline.
PROJECT_YES_NO_TRAIN = "yesno/train.spacy"


def evaluate_qa_project(
    training_dir: Union[str, Path],
    corpus_dir: Union[str, Path],
    metrics_dir: Union[str, Path],
    paper_results: Optional[Path] = None,
    name: str = "spacy-biolm",
    gpu_id: int = -1,
    batch_size: int = 16,
    encoder: Optional[Union[str, Path]] = None,
) -> str:
    """Evaluate the project's three QA pipelines (``training_dir/<task>/model-best``) on their test
    sets in one process, each beside its baselines on the same Docs (majority answer of the yes/no
    training set, most frequent snippet word, BM25 and the zero-shot cosine of ``encoder`` when given); write
    ``metrics_dir/<name>_test.json`` per test set and ``metrics_dir/qa_results.md`` (ours beside the
    baselines and the papers). Returns the table."""
    from ..run_record import RUN_KEY, with_run_comment, write_json

    metrics_dir = Path(metrics_dir)
    metrics_dir.mkdir(parents=True, exist_ok=True)
    pipelines: dict = {}
    written: Dict[str, Path] = {}
    for metric_name, (task, data) in PROJECT_TEST_SETS.items():
        if task not in pipelines:
            pipelines[task] = load_pipeline(Path(training_dir) / task / "model-best", gpu_id=gpu_id)
        nlp = pipelines[task]
        if task == "yes_no":
            baselines = [majority_baseline(Path(corpus_dir) / PROJECT_YES_NO_TRAIN)]
        elif task == "answer_span":
            baselines = [frequent_word_answers]
        else:
            baselines = reranking_baselines(encoder, reranker_lexical_weight(nlp))
        scores = evaluate_qa(nlp, Path(corpus_dir) / data, batch_size=batch_size, baselines=baselines)
        written[metric_name] = metrics_dir / f"{metric_name}_test.json"
        scores = write_json(written[metric_name], scores, device=scores.get("device"))  # this run's commit and date
    table = qa_results_table(written, paper_results=paper_results, name=name)
    (metrics_dir / "qa_results.md").write_text(with_run_comment(table, scores[RUN_KEY]), encoding="utf8")
    return table
