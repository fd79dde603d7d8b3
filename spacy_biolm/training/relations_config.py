"""The release's multi-task config grown by a relation extractor (issue 46, item 5).

``add_relation_extractor(config, name, ...)`` takes a multi-task config (configs/release_multitask.cfg,
or the one ``add_entity_types`` wrote) and returns it with a second ``relation_extractor``-factory
component, built like the config's own (``template``: the fast mode, listening to the one
transformer) with its own labels, entity-type pairs and score keys, and its corpus as a task of the
train and dev readers. Each extractor learns and predicts only the relations between entities of
its pair types (``RelationExtractor.own_relations``), so ChemProt's chemical-gene relations and
GAD's gene-disease ones share the pipeline, each scored under its own keys."""

import copy
from pathlib import Path
from typing import Union

from thinc.api import Config

from .entity_types_config import TASK_CORPUS

__all__ = ["add_relation_extractor"]

SCORER = "spacy-biolm.relations_scorer.v1"


def add_relation_extractor(config: Config, name: str, dataset: str, task: str, train: Union[str, Path],
                           dev: Union[str, Path], score_prefix: str, score_weight: float = 0.0,
                           template: str = "relation_extractor", dev_limit: int = 0) -> Config:
    """``config`` with a component ``name`` (a deep copy of ``template`` with the labels and entity
    type pairs of ``dataset``, a key of ``spacy_biolm.corpora.relations.DATASETS``, and a scorer
    whose keys start with ``score_prefix``) after ``template``, the
    relation DocBins ``train`` and ``dev`` (gold entities) as the task ``task`` of
    ``[corpora.train.tasks]`` and ``[corpora.dev.tasks]`` (dev: at most ``dev_limit`` Docs; 0:
    all), and ``<score_prefix>_micro_f`` weighing ``score_weight`` in choosing ``model-best``.

    Raises ValueError for an unknown dataset, a name the pipeline has, a template that is no
    ``relation_extractor``, a pair type another extractor of the config has (both would claim the
    same relations), a score prefix another extractor's scorer uses, and a task name the readers
    already use."""
    from ..corpora.relations import DATASETS
    from ..pipes.relation_extractor.scorer import configured_prefix

    if dataset not in DATASETS:
        raise ValueError(f"unknown relation dataset {dataset!r}; expected one of {sorted(DATASETS)}")
    labels, pairs = list(DATASETS[dataset]["labels"]), [list(pair) for pair in DATASETS[dataset]["pair_types"]]
    config = Config(copy.deepcopy(dict(config)))
    components, pipeline = config["components"], list(config["nlp"]["pipeline"])
    if name in pipeline or name in components:
        raise ValueError(f"the config already has a component {name!r}")
    if components.get(template, {}).get("factory") != "relation_extractor":
        raise ValueError(f"template {template!r} is not a relation_extractor of the config's pipeline")
    extractors = {other: block for other, block in components.items()
                  if isinstance(block, dict) and block.get("factory") == "relation_extractor"}
    for other, block in extractors.items():
        shared = [pair for pair in pairs if pair in [list(p) for p in block.get("pair_types", [])]]
        if shared:
            raise ValueError(f"{other} already pairs {shared}: two extractors would claim the same relations")
    if score_prefix in {configured_prefix(block) for block in extractors.values()}:
        raise ValueError(f"score prefix {score_prefix!r} is taken: its keys would overwrite another extractor's scores")

    block = copy.deepcopy(components[template])
    block.update(labels=labels, pair_types=pairs, scorer={"@scorers": SCORER, "prefix": score_prefix})
    components[name] = block
    pipeline.insert(pipeline.index(template) + 1, name)
    config["nlp"]["pipeline"] = pipeline
    for split, path, limit in (("train", train, 0), ("dev", dev, dev_limit)):
        tasks = config["corpora"][split]["tasks"]
        if task in tasks:
            raise ValueError(f"[corpora.{split}.tasks] already has a task named {task!r}")
        tasks[task] = {"@readers": TASK_CORPUS, "path": str(path), "annotates": ["relations"], "gold_entities": True,
                       "limit": limit}
    weights = config["training"]["score_weights"]
    weights.update({f"{score_prefix}_micro_f": score_weight, f"{score_prefix}_micro_p": 0.0,
                    f"{score_prefix}_micro_r": 0.0})
    return config
