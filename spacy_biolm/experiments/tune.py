"""Hyperparameter search with hyperopt (TPE) over spaCy config values.

A search space maps config paths to the values to try, e.g. ``training.max_epochs = [3, 5, 15,
20]``. Each trial trains the config with those values as overrides (``spacy train``) and scores
``model-best`` on the dev set; hyperopt minimises minus the dev score. Trials are saved after
every evaluation (``trials.pkl``), so an interrupted search resumes where it stopped, and every
trial is logged to ``trials.jsonl``. The best values are written back into a complete ``.cfg``.
"""

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

__all__ = ["load_space", "tune"]

TRIALS_FILE = "trials.pkl"
LOG_FILE = "trials.jsonl"
BEST_CONFIG = "best.cfg"


def load_space(path: Path) -> Dict[str, List[Any]]:
    """The ``[space]`` section of a .cfg: config path -> list of candidate values."""
    from thinc.api import Config

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Search space not found: {path}")
    config = Config().from_disk(path, interpolate=False)
    if "space" not in config or not config["space"]:
        raise ValueError(f"{path}: needs a non-empty [space] section (config.path = [value, ...])")
    space = {}
    for key, values in config["space"].items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"{path}: [space] {key} must be a non-empty list of values, got {values!r}")
        space[key] = values
    return space


def tune(
    config_path: Path,
    output_dir: Path,
    space: Dict[str, List[Any]],
    max_evals: int,
    dev_metric: str = "ents_f",
    overrides: Optional[Dict[str, Any]] = None,
    seed: int = 0,
    use_gpu: int = -1,
) -> Dict[str, Any]:
    """Run (or resume) a TPE search of ``max_evals`` trials in total; return the best trial
    ({"params", "dev_score", "trial"}) and write ``best.cfg``."""
    import numpy as np
    from hyperopt import STATUS_OK, Trials, fmin, hp, space_eval, tpe
    from spacy.cli.train import train
    from thinc.api import Config

    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    base = Config().from_disk(config_path, interpolate=False)
    for key in space:  # a misspelt path would otherwise only fail inside the first trial
        _check_path(base, key, config_path)
    hp_space = {key: hp.choice(key, values) for key, values in space.items()}
    trials_path = output_dir / TRIALS_FILE
    log_path = output_dir / LOG_FILE

    def objective(params: Dict[str, Any]) -> Dict[str, Any]:
        index = _count_lines(log_path)
        trial_dir = output_dir / f"trial_{index:03d}"
        values = {k: _plain(v) for k, v in params.items()}
        train(config_path, trial_dir, use_gpu=use_gpu, overrides={**(overrides or {}), **values})
        meta = json.loads((trial_dir / "model-best" / "meta.json").read_text(encoding="utf8"))
        score = meta.get("performance", {}).get(dev_metric)
        if score is None:
            raise KeyError(f"Dev metric {dev_metric!r} not in {trial_dir}/model-best/meta.json performance")
        with log_path.open("a", encoding="utf8") as log:
            log.write(json.dumps({"trial": index, "params": values, dev_metric: score}) + "\n")
        return {"loss": -float(score), "status": STATUS_OK, "trial": index}

    trials = Trials()
    if trials_path.is_file():  # resume: fmin continues from the saved trials
        import pickle

        with trials_path.open("rb") as f:
            trials = pickle.load(f)
    fmin(objective, hp_space, algo=tpe.suggest, max_evals=max_evals, trials=trials,
         rstate=np.random.default_rng(seed), trials_save_file=str(trials_path), show_progressbar=True)
    best_trial = trials.best_trial
    params = {k: _plain(v) for k, v in space_eval(hp_space, {k: v[0] for k, v in best_trial["misc"]["vals"].items()}).items()}
    best = {"params": params, "dev_score": -best_trial["result"]["loss"], "trial": best_trial["result"]["trial"],
            "dev_metric": dev_metric, "trials": len(trials.trials)}
    Config().from_disk(config_path, overrides={**(overrides or {}), **params}, interpolate=False).to_disk(
        output_dir / BEST_CONFIG
    )
    (output_dir / "best.json").write_text(json.dumps(best, indent=2), encoding="utf8")
    return best


def _check_path(config, dotted: str, source: Path) -> None:
    node = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise KeyError(f"[space] {dotted}: no such setting in {source}")
        node = node[part]


def _plain(value: Any) -> Any:
    """numpy scalars from hyperopt -> plain Python numbers (for JSON and spaCy overrides)."""
    return value.item() if hasattr(value, "item") else value


def _count_lines(path: Path) -> int:
    if not path.is_file():
        return 0
    with path.open(encoding="utf8") as f:
        return sum(1 for line in f if line.strip())
