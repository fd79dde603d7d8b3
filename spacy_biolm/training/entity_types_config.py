"""The release's multi-task config grown by entity types (issue 46, item 4).

``add_entity_types(config, directory, corpora, types)`` takes a multi-task config
(configs/release_multitask.cfg: ``typed_ner`` components beside other heads on one transformer, a
``spacy-biolm.MultiTaskCorpus.v1`` per split) and returns it with a ``typed_ner`` per new type,
built like an existing one, and the NER corpora converted to the release's types
(``directory/<corpus>/{train,devel}.spacy``, as projects/entity-types writes them) as task corpora
of its train and dev readers. An added corpus teaches only the new types: a type the config already
has (GENE from BC2GM) keeps its own corpora, so another corpus's guideline for it does not reach
that component (projects/entity-types, workflow ``gene-sources``: nine corpora teaching GENE cost
BC2GM 10 F1)."""

import copy
from pathlib import Path
from typing import Dict, List, Sequence, Union

from thinc.api import Config

__all__ = ["add_entity_types", "typed_ner_types"]

TASK_CORPUS = "spacy-biolm.TaskCorpus.v1"


def typed_ner_types(config: Config) -> Dict[str, List[str]]:
    """``{component: its entity_types}`` for every ``typed_ner`` of ``config``, in pipeline order."""
    components = config.get("components", {})
    return {name: list(components[name]["entity_types"]) for name in config["nlp"]["pipeline"]
            if components.get(name, {}).get("factory") == "typed_ner"}


def add_entity_types(config: Config, directory: Union[str, Path], corpora: Sequence[str], types: Sequence[str],
                     template: str = "ner_gene", dev_limit: int = 0) -> Config:
    """``config`` with a ``typed_ner`` named ``ner_<type>`` for each of ``types`` (a deep copy of the
    component ``template`` with its ``entity_types`` replaced), placed after the config's last
    ``typed_ner``, and each of ``corpora`` added to ``[corpora.train.tasks]`` (its train split) and
    ``[corpora.dev.tasks]`` (devel, at most ``dev_limit`` Docs; 0: all), teaching the new types it
    annotates completely (``spacy_biolm/corpora/entity_types.py``) and no other.

    Raises ValueError for a type the config already has or the release does not know, a template
    that is no ``typed_ner``, a corpus that annotates none of ``types``, a corpus name the config's
    readers already use, and types no added corpus teaches."""
    from ..corpora.entity_types import RELEASE_TYPES, annotated_types

    config = Config(copy.deepcopy(dict(config)))
    existing = typed_ner_types(config)
    if template not in existing:
        raise ValueError(f"template {template!r} is not a typed_ner of the config's pipeline (those are {list(existing)})")
    have = {t for ts in existing.values() for t in ts}
    for entity_type in types:
        if entity_type not in RELEASE_TYPES:
            raise ValueError(f"entity type {entity_type!r} is not one of the release's {list(RELEASE_TYPES)}")
        if entity_type in have:
            raise ValueError(f"the config already has a typed_ner for {entity_type}; its corpora stay as they are")
    taught = {corpus: [t for t in annotated_types(corpus) if t in types] for corpus in corpora}
    for corpus, corpus_types in taught.items():
        if not corpus_types:
            raise ValueError(f"{corpus} annotates none of {list(types)} completely (it annotates {list(annotated_types(corpus))})")
    untaught = [t for t in types if not any(t in ts for ts in taught.values())]
    if untaught:
        raise ValueError(f"no corpus of {list(corpora)} annotates {untaught}")

    components = config["components"]
    pipeline = list(config["nlp"]["pipeline"])
    at = pipeline.index(list(existing)[-1]) + 1
    for offset, entity_type in enumerate(types):
        name = f"ner_{entity_type.lower()}"
        block = copy.deepcopy(components[template])
        block["entity_types"] = [entity_type]
        components[name] = block
        pipeline.insert(at + offset, name)
    config["nlp"]["pipeline"] = pipeline

    for split, folder_split, limit in (("train", "train", 0), ("dev", "devel", dev_limit)):
        tasks = config["corpora"][split]["tasks"]
        for corpus, corpus_types in taught.items():
            if corpus in tasks:
                raise ValueError(f"[corpora.{split}.tasks] already has a task named {corpus!r}")
            tasks[corpus] = {"@readers": TASK_CORPUS, "path": str(Path(directory) / corpus / f"{folder_split}.spacy"),
                             "annotates": ["entities"], "entity_types": list(annotated_types(corpus)),
                             "annotated_types": corpus_types, "limit": limit}
    return config
