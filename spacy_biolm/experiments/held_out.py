"""Leave-one-corpus-out runs of a multi-corpus NER config (projects/entity-types).

A pipeline trained on many corpora is scored on a corpus it never read by training it once more
without that corpus: the config's readers leave out ``paths.held_out``
(``spacy-biolm.EntityTypeCorpora.v1``), and ``model-best`` is scored on the held-out corpus's test
set alone, on the types that corpus annotates completely. One run per corpus; together they are
the cross-corpus column of the entity-type table (``docs entity-corpora-table``), written in the
format of :func:`~spacy_biolm.evaluation.entities.evaluate_entity_corpora` with no corpus trained
on, so every cell of that column is marked as never seen.
"""

import time
from pathlib import Path
from typing import Dict, Optional, Sequence

from .seeds import recipe_fingerprint, scored_run

__all__ = ["run_held_out", "RUN_SCORES"]

RUN_SCORES = "held_out_scores.json"


def run_held_out(
    config_path: Path,
    output_dir: Path,
    directory: Path,
    corpora: Sequence[str],
    overrides: Optional[Dict[str, object]] = None,
    split: str = "test",
    use_gpu: int = -1,
    scores_dir: Optional[Path] = None,
    scored_only: bool = False,
) -> Dict[str, object]:
    """For each of ``corpora``: train ``config_path`` without it (``paths.held_out``) into
    ``output_dir/<corpus>`` and score ``model-best`` on ``directory/<corpus>/<split>.spacy``.
    Returns ``{"types", "trained_on": [], "corpora": {corpus: scores}, "held_out": {corpus: the
    run's model, the corpora it trained on, its training and test seconds}, "not_run": []}``. A run already
    scored (``<corpus>/held_out_scores.json``, or ``scores_dir/<corpus>.json``) is reused if it
    was trained with the same recipe, so an interrupted matrix resumes where it stopped; with
    ``scores_dir`` a folder that is kept (committed), it resumes in another checkout, where the
    trained runs are gone. ``scored_only``: train nothing; the corpora without a scored run are
    listed under ``"not_run"`` (the matrix so far, while it is run a few corpora at a time)."""
    from spacy.cli.train import train
    from spacy.util import load_config

    from ..corpora.entity_types import ENTITY_TYPES
    from ..evaluation.entities import evaluate_entity_corpora, taught_types
    from ..run_record import write_json

    if not corpora:
        raise ValueError("No corpus to hold out: name one or more (--corpus)")
    missing = [str(path) for path in (Path(directory) / c / f"{split}.spacy" for c in corpora) if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"{', '.join(missing)} missing: convert the corpora first (projects/entity-types: convert)")
    merged: Dict[str, object] = {"config": str(config_path), "split": split, "types": [], "trained_on": [],
                                 "corpora": {}, "held_out": {}, "not_run": []}
    for corpus in corpora:
        run_dir = Path(output_dir) / corpus
        run_overrides = {**(overrides or {}), "paths.held_out": corpus}
        recipe = recipe_fingerprint(config_path, run_overrides)
        scores_path = run_dir / RUN_SCORES if scores_dir is None else Path(scores_dir) / f"{corpus}.json"
        result = scored_run(scores_path, recipe, config_path, run_overrides)
        if result is None and scored_only:
            merged["not_run"].append(corpus)
            continue
        if result is None:
            start = time.perf_counter()
            train(config_path, run_dir, use_gpu=use_gpu, overrides=run_overrides)
            trained = time.perf_counter()
            # Every corpus of the table the run read, not only the one scored: the column's record of each run.
            read = taught_types(load_config(run_dir / "model-best" / "config.cfg"), list(ENTITY_TYPES))
            if corpus in read:
                raise RuntimeError(f"{run_dir}/model-best trained on {corpus}, the corpus it was to leave out")
            result = evaluate_entity_corpora(run_dir / "model-best", directory, [corpus], split=split, use_gpu=use_gpu,
                                             trained=read)
            if corpus not in result["corpora"]:
                raise ValueError(f"{corpus} annotates none of the entity types {result['types']} the pipeline predicts")
            result.update(train_seconds=round(trained - start, 1), test_seconds=round(time.perf_counter() - trained, 1),
                          recipe=recipe)
            result = write_json(scores_path, result, device="gpu" if use_gpu >= 0 else "cpu")
        merged["corpora"][corpus] = result["corpora"][corpus]
        merged["held_out"][corpus] = {key: result.get(key) for key in ("model", "trained_on", "train_seconds", "test_seconds")}
        merged["types"] = sorted(set(merged["types"]) | set(result["types"]))
    return merged
