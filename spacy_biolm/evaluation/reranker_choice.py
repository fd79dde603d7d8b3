"""Which answer reranker ships: the trained pipeline, or the ranker its training started from.

The answer reranker starts from a ranker (the sentence encoder's zero-shot cosine, BM25 beside it)
and chooses its checkpoint on a small dev set (Bio-AnswerFinder's: 26 questions), so spaCy's
``model-best``, the best of a few noisy dev scores, can be a checkpoint no better than its start.
:func:`choose_reranker` ships the trained pipeline only when a paired bootstrap over the dev
questions puts its gain over the start above zero (one-sided p-value below ``alpha``), each ranker
with its own lexical weight tuned on that dev set; otherwise it ships the start.
"""

import shutil
from pathlib import Path
from typing import Dict, Sequence, Union

import numpy
from spacy.language import Language

from ..loading import load_pipeline
from .qa import LEXICAL_WEIGHTS, lexical_weight_curve, reranking_examples, store_lexical_weight

__all__ = ["paired_bootstrap", "untrained_start", "choose_reranker"]


def paired_bootstrap(ours: Sequence[float], theirs: Sequence[float], resamples: int = 10000, seed: int = 0) -> Dict[str, float]:
    """The mean of ``ours - theirs`` over paired items (questions), a 90% interval of it and the
    one-sided p-value that ours is not better: the share of resamples of the items (with
    replacement, numpy's seeded generator) whose mean difference is <= 0."""
    if len(ours) != len(theirs) or not len(ours):
        raise ValueError(f"paired_bootstrap: needs two equally long, non-empty sequences, got {len(ours)} and {len(theirs)}")
    differences = numpy.asarray(ours, dtype="float64") - numpy.asarray(theirs, dtype="float64")
    rng = numpy.random.default_rng(seed)
    means = differences[rng.integers(0, differences.size, size=(resamples, differences.size))].mean(axis=1)
    low, high = numpy.percentile(means, [5, 95])
    return {"difference": float(differences.mean()), "ci90_low": float(low), "ci90_high": float(high),
            "p_not_better": float((means <= 0).mean()), "resamples": resamples, "items": int(differences.size)}


def untrained_start(trained_dir: Union[str, Path]) -> Language:
    """The pipeline that ``trained_dir``'s training started from: its saved config initialized
    (encoder, warm start and corpora as that config names them, read from the working directory)
    without an update."""
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config

    return init_nlp(load_config(Path(trained_dir) / "config.cfg", interpolate=False))


def choose_reranker(
    trained_dir: Union[str, Path], dev_path: Union[str, Path], output_dir: Union[str, Path], alpha: float = 0.05,
    weights: Sequence[float] = LEXICAL_WEIGHTS, resamples: int = 10000, seed: int = 0, gpu_id: int = -1,
) -> Dict[str, object]:
    """Tune the lexical weight of the trained reranker at ``trained_dir`` and of its untrained
    start on ``dev_path``, compare them question by question (:func:`paired_bootstrap`) and save
    the one that ships to ``output_dir`` (an existing saved pipeline there is replaced; any other
    directory is an error). Returns the record: which one, both dev curves and the bootstrap."""
    trained_dir, output_dir = Path(trained_dir), Path(output_dir)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"choose_reranker: alpha must be in (0, 1), got {alpha!r}")
    if output_dir.exists() and not (output_dir / "config.cfg").is_file():
        raise FileExistsError(f"{output_dir} exists and is not a saved spaCy pipeline (no config.cfg): not overwritten")
    if output_dir.resolve() == trained_dir.resolve():
        raise ValueError(f"{output_dir} is the trained pipeline; give another directory")
    rankers = {"trained": load_pipeline(trained_dir, gpu_id=gpu_id), "untrained start": untrained_start(trained_dir)}
    curves, ranks = {}, {}
    for which, nlp in rankers.items():
        examples = reranking_examples(nlp, dev_path)
        name, best, mrr, question_ranks = lexical_weight_curve(nlp, examples, weights)
        curves[which] = {"lexical_weight": best, "dev_mrr": {str(w): v for w, v in mrr.items()}}
        ranks[which] = question_ranks[best]
    questions = sorted(ranks["trained"])
    bootstrap = paired_bootstrap([ranks["trained"][q] for q in questions], [ranks["untrained start"][q] for q in questions],
                                 resamples=resamples, seed=seed)
    chosen = "trained" if bootstrap["p_not_better"] < alpha else "untrained start"
    record = {"component": name, "dev": str(dev_path), "questions": len(questions), "alpha": alpha, "chosen": chosen,
              **curves[chosen], "rankers": curves, "trained_minus_start": bootstrap, "trained": str(trained_dir)}
    if output_dir.exists():
        shutil.rmtree(output_dir)
    nlp = rankers[chosen]
    nlp.meta.setdefault("spacy_biolm", {})["reranker_choice"] = {
        **{k: record[k] for k in ("chosen", "lexical_weight", "questions", "alpha")},
        "trained_minus_start_mrr": bootstrap["difference"], "p_not_better": bootstrap["p_not_better"]}
    nlp.to_disk(output_dir)
    store_lexical_weight(nlp, name, output_dir)  # config.cfg too, so that loading ranks with it
    return record
