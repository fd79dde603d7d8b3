"""Evaluation of the question-answering pipelines and their results tables beside the papers'."""

import json
import time
from pathlib import Path
from typing import Dict, List, Optional, Union

__all__ = ["evaluate_qa", "qa_results_table"]


def evaluate_qa(
    model: Union[str, Path], data_path: Union[str, Path], gpu_id: int = -1, batch_size: int = 16, threads: int = 0,
    limit: int = 0,
) -> Dict[str, float]:
    """Run a QA pipeline over a QA DocBin (read with ``spacy-biolm.QACorpus.v1``, so the questions
    stay on the Docs), score it with its components' scorers and time it (``limit``: only the first Docs).

    Returns the scores plus ``docs``, ``questions`` (distinct question ids), ``seconds`` (pipeline
    time only), ``docs_per_second``, ``questions_per_second`` and ``torch_threads``.
    """
    import spacy
    import torch
    from spacy.scorer import Scorer

    from ..corpora.qa import QACorpus
    from ..pipes.qa_doc import question_group

    if gpu_id >= 0:
        spacy.require_gpu(gpu_id)
    if threads > 0:
        torch.set_num_threads(threads)
    nlp = spacy.load(model)
    examples = list(QACorpus(data_path, limit=limit)(nlp))
    start = time.perf_counter()
    docs = list(nlp.pipe((eg.predicted for eg in examples), batch_size=batch_size))
    seconds = time.perf_counter() - start
    for eg, doc in zip(examples, docs):
        eg.predicted = doc
    scores = {
        k: v for k, v in Scorer(nlp).score(examples).items() if not isinstance(v, dict) and not k.startswith("token_")
    }
    questions = len({question_group(eg.reference) for eg in examples})
    scores.update(
        docs=len(examples),
        questions=questions,
        seconds=seconds,
        docs_per_second=len(examples) / seconds if seconds else 0.0,
        questions_per_second=questions / seconds if seconds else 0.0,
        torch_threads=torch.get_num_threads(),
        device="gpu" if gpu_id >= 0 else "cpu",
    )
    return scores


def _pct(value: Optional[float]) -> str:
    return "" if value is None else f"{100 * value:.2f}"


def _speed(scores: dict) -> str:
    qps = scores.get("questions_per_second")
    return f"{qps:,.1f} ({scores.get('torch_threads')} threads)" if qps else ""


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
    "answer_reranker": (
        "Answer-sentence reranking (Bio-ELECTRA test set, 100 questions), MRR",
        [("MRR", "rerank_mrr")],
        ("bio_electra_2020", "reranking_bioasq"),
    ),
}


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


def qa_results_table(metrics: Dict[str, Path], paper_results: Optional[Path] = None, name: str = "spacy-biolm") -> str:
    """Markdown tables, one per task in ``metrics`` (task -> evaluate-qa JSON), with the papers' rows."""
    paper = json.loads(Path(paper_results).read_text(encoding="utf8")) if paper_results and Path(paper_results).is_file() else {}
    out: List[str] = []
    for task, path in metrics.items():
        if task not in _TASKS:
            raise ValueError(f"unknown QA task {task!r}; expected one of {sorted(_TASKS)}")
        title, columns, (source, section) = _TASKS[task]
        scores = json.loads(Path(path).read_text(encoding="utf8"))
        mrr_only = task == "answer_reranker"
        ours = [f"{scores.get(key):.3f}" if mrr_only and scores.get(key) is not None else _pct(scores.get(key)) for _, key in columns]
        header = ["model", *(c for c, _ in columns), "questions/s (CPU)"]
        out += [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
        out.append("| " + " | ".join([f"{name} (ours)", *ours, _speed(scores)]) + " |")
        out += ["| " + " | ".join(row) + " |" for row in _paper_rows(paper, source, section, len(columns))]
        out.append("")
    return "\n".join(out)
