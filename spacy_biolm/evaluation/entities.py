"""A ``ner``'s scores on a test set that annotates some of its entity types.

The multi-task release finds DISEASE and GENE (a ``typed_ner`` each); NCBI-disease's test set marks
diseases only, BC2GM's genes only. Each is scored on its own types
(:func:`~spacy_biolm.pipes.entity_scorer.score_annotated_entities`), which for one type is that
type's P/R/F1 in ``spacy evaluate``'s ``ents_per_type``, the number the per-task ``ner`` is
compared by.
"""

from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Union

from ..loading import load_pipeline

__all__ = ["evaluate_entity_types", "score_entity_types", "predict_entities", "score_predicted_entities", "evaluate_entity_corpora", "pipeline_entity_types",
           "taught_types", "trained_on", "entity_corpora_table", "entity_errors"]


def predict_entities(nlp, data_path: Path) -> List["Example"]:
    """``nlp``'s predictions on the DocBin ``data_path``, each an Example of the predicted Doc and
    its gold one: score them for several sets of types with :func:`score_predicted_entities`."""
    from spacy.training import Corpus, Example

    examples = list(Corpus(str(data_path))(nlp))
    return [Example(doc, eg.reference) for doc, eg in zip(nlp.pipe(eg.predicted for eg in examples), examples)]


def score_predicted_entities(predicted: Sequence["Example"], types: Sequence[str]) -> Dict[str, object]:
    """``ents_p``, ``ents_r``, ``ents_f`` and ``ents_per_type`` of :func:`predict_entities`'
    Examples, counting entities of ``types`` only (predictions over missing gold tokens neither
    right nor wrong), with ``types`` and ``docs``. Where the pipeline keeps its entities in
    ``doc.spans["entities"]`` (``typed_ner``) those are scored, and ``doc_ents`` holds the scores
    of ``doc.ents``, which leaves out an entity that overlaps one found before it."""
    from ..doc_data import ENTITIES_SPANS_KEY, set_annotated_entity_types
    from ..pipes.entity_scorer import score_annotated_entities

    for eg in predicted:
        set_annotated_entity_types(eg.reference, types)
    scores = score_annotated_entities(predicted)
    if any(ENTITIES_SPANS_KEY in eg.predicted.spans for eg in predicted):
        in_ents = score_annotated_entities(predicted, spans_key=None)
        scores["doc_ents"] = {key: in_ents[key] for key in ("ents_p", "ents_r", "ents_f")}
    scores.update({"types": sorted(types), "docs": len(predicted)})
    return scores


def entity_errors(predicted: Sequence["Example"], entity_type: str, top: int = 25) -> Dict[str, object]:
    """Where :func:`predict_entities`' Examples go wrong on ``entity_type``: exact-match true
    positives, false positives and false negatives, P/R/F1 from them, and the ``top`` most frequent
    texts of each kind of error (a test set that repeats one name can hold many of a model's
    errors). A prediction over a token whose gold tag is missing is not counted, as in the scorer."""
    from collections import Counter

    from ..doc_data import ENTITIES_SPANS_KEY

    hits, false_positives, false_negatives = 0, Counter(), Counter()
    for eg in predicted:
        doc, reference = eg.predicted, eg.reference
        found = doc.spans[ENTITIES_SPANS_KEY] if ENTITIES_SPANS_KEY in doc.spans else doc.ents
        known = [token.ent_iob != 0 for token in reference]
        found = {(e.start, e.end): e.text for e in found if e.label_ == entity_type and all(known[e.start:e.end])}
        gold = {(e.start, e.end): e.text for e in reference.ents if e.label_ == entity_type}
        hits += len(found.keys() & gold.keys())
        false_positives.update(text for span, text in found.items() if span not in gold)
        false_negatives.update(text for span, text in gold.items() if span not in found)
    n_fp, n_fn = sum(false_positives.values()), sum(false_negatives.values())
    precision = hits / (hits + n_fp) if hits + n_fp else 0.0
    recall = hits / (hits + n_fn) if hits + n_fn else 0.0
    return {"type": entity_type, "docs": len(predicted), "true_positives": hits, "false_positives": n_fp,
            "false_negatives": n_fn, "p": precision, "r": recall,
            "f": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            "top_false_positives": false_positives.most_common(top), "top_false_negatives": false_negatives.most_common(top)}


def score_entity_types(nlp, data_path: Path, types: Sequence[str]) -> Dict[str, object]:
    """:func:`score_predicted_entities` of ``nlp`` on the DocBin ``data_path`` for ``types``."""
    return score_predicted_entities(predict_entities(nlp, data_path), types)


def _write(output: Optional[Path], scores: Dict[str, object], use_gpu: int) -> None:
    if output is not None:
        from ..run_record import write_json

        write_json(output, scores, device="gpu" if use_gpu >= 0 else "cpu")


def evaluate_entity_types(model_path: Path, data_path: Path, types: Sequence[str], output: Optional[Path] = None,
                          use_gpu: int = -1) -> Dict[str, object]:
    """:func:`score_entity_types` of the pipeline at ``model_path``; optionally written as JSON."""
    scores = score_entity_types(load_pipeline(model_path, use_gpu), data_path, types)
    _write(output, scores, use_gpu)
    return scores


def pipeline_entity_types(nlp) -> List[str]:
    """The entity labels the pipeline's NER components (``ner``, ``typed_ner``) predict."""
    from spacy.pipeline import EntityRecognizer

    return sorted({label for _, pipe in nlp.pipeline if isinstance(pipe, EntityRecognizer) for label in pipe.labels})


def taught_types(config, corpora: Sequence[str]) -> Dict[str, List[str]]:
    """``{corpus: the entity types it taught}`` for each of ``corpora`` that a pipeline's ``config``
    (``nlp.config``) read in ``[corpora.train]``: a name given as a value
    (``spacy-biolm.EntityTypeCorpora.v1``'s list, less its ``held_out`` corpus and the types its
    ``type_corpora`` give to other corpora) or as a folder of a path (``corpus/ner/BC2GM/train.spacy``;
    a ``spacy-biolm.TaskCorpus.v1`` teaches its ``annotated_types`` when it names them, otherwise every
    type the corpus annotates)."""
    from ..corpora.entity_types import RELEASE_TYPES, annotated_types
    from ..corpora.multitask import teaches

    taught: Dict[str, set] = {}

    def add(corpus: str, types) -> None:
        taught.setdefault(corpus, set()).update(types)

    def walk(value) -> None:
        if isinstance(value, dict):
            if value.get("@readers") == "spacy-biolm.EntityTypeCorpora.v1":
                for corpus in value.get("corpora", []):
                    if corpus in corpora and corpus != value.get("held_out"):
                        add(corpus, [t for t in annotated_types(corpus) if teaches(corpus, t, value.get("type_corpora"))])
            elif value.get("@readers") == "spacy-biolm.TaskCorpus.v1" and value.get("annotated_types") is not None:
                for corpus in corpora:
                    if corpus in Path(str(value.get("path"))).parts:
                        add(corpus, value["annotated_types"])
            else:
                for item in value.values():
                    walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            for corpus in corpora:
                if corpus == value or corpus in Path(value).parts:
                    add(corpus, annotated_types(corpus))

    walk(config.interpolate().get("corpora", {}).get("train", {}))  # held_out = ${paths.held_out}
    return {corpus: sorted(taught[corpus], key=RELEASE_TYPES.index) for corpus in corpora if taught.get(corpus)}


def trained_on(config, corpora: Sequence[str]) -> List[str]:
    """Which of ``corpora`` a pipeline's ``config`` read in ``[corpora.train]`` to teach some entity type
    (:func:`taught_types`)."""
    return list(taught_types(config, corpora))


def evaluate_entity_corpora(model_path: Path, directory: Path, corpora: Sequence[str], output: Optional[Path] = None,
                            split: str = "test", use_gpu: int = -1,
                            trained: Optional[Union[Sequence[str], Mapping[str, Sequence[str]]]] = None) -> Dict[str, object]:
    """The pipeline at ``model_path`` on each corpus's ``directory/<corpus>/<split>.spacy``
    (converted to the release's entity types), scored on each type the corpus annotates
    completely (``spacy_biolm/corpora/entity_types.py``) and the pipeline predicts: ``{"types":
    the pipeline's, "trained_on": the corpora it trained on, "taught": {corpus: the types it taught},
    "corpora": {corpus: scores}}`` (a corpus sharing no type with the pipeline is left out);
    optionally written as JSON. ``trained`` names the corpora it trained on, each teaching every
    type it annotates (or ``{corpus: the types it taught}``), where its config cannot (an assembled
    pipeline's components were trained elsewhere) or ``corpora`` leaves some out; by default they are
    read from its ``[corpora.train]`` (:func:`taught_types`)."""
    from ..corpora.entity_types import annotated_types

    nlp = load_pipeline(model_path, use_gpu)
    types = pipeline_entity_types(nlp)
    if trained is None:
        taught = taught_types(nlp.config, corpora)
    elif isinstance(trained, Mapping):
        taught = {corpus: list(corpus_types) for corpus, corpus_types in trained.items()}
    else:
        taught = {corpus: list(annotated_types(corpus)) for corpus in trained}
    results: Dict[str, object] = {"model": str(model_path), "split": split, "types": types,
                                  "trained_on": list(taught), "taught": taught, "corpora": {}}
    for corpus in corpora:
        shared = [t for t in annotated_types(corpus) if t in types]
        if shared:
            results["corpora"][corpus] = score_entity_types(nlp, Path(directory) / corpus / f"{split}.spacy", shared)
    _write(output, results, use_gpu)
    return results


def entity_corpora_table(results: Dict[str, Path], only: Sequence[str] = ()) -> str:
    """Markdown: per entity type, each corpus's F1 of every pipeline in ``results`` (``{column:
    evaluate_entity_corpora JSON}``), † where the pipeline never learnt the type from that corpus
    (its ``taught``; a result without it: never trained on the corpus), and two macro F1 rows over
    two or more corpora: over the corpora every pipeline predicting the type was scored on, and
    cross-corpus, over those of them from which no pipeline with a † among them learnt the type
    (the single-corpus release against leave-one-corpus-out runs). ``only``: the rows of these
    test sets alone (all: every test set a result scored)."""
    import json

    from ..corpora.entity_types import RELEASE_TYPES
    from .tables import markdown_table

    loaded = {name: json.loads(Path(path).read_text(encoding="utf8")) for name, path in results.items()}

    def f1(result, corpus, entity_type):
        # None: not scored (the pipeline lacks the type, or the test set has no mention of it and none was predicted)
        score = ((result["corpora"].get(corpus) or {}).get("ents_per_type") or {}).get(entity_type)
        return None if score is None else 100 * score["f"]

    def learnt(result, corpus, entity_type) -> bool:
        # Results written before "taught" was recorded: every type of a corpus read counts as learnt from it.
        taught = result.get("taught")
        return corpus in result["trained_on"] if taught is None else entity_type in taught.get(corpus, [])

    def macro_row(entity_type, label, corpora, columns):
        if len(corpora) < 2 or not columns:  # a mean of one test set repeats its row; no column, no row
            return None
        cells = [f"**{sum(f1(r, c, entity_type) for c in corpora) / len(corpora):.1f}**" if name in columns else "–"
                 for name, r in loaded.items()]
        return [f"**{entity_type}**", f"**{label} ({len(corpora)} corpora)**", *cells]

    rows = []
    for entity_type in RELEASE_TYPES:
        corpora = [c for c in dict.fromkeys(c for r in loaded.values() for c in r["corpora"])
                   if any(entity_type in r["corpora"].get(c, {}).get("types", []) for r in loaded.values())
                   and (not only or c in only)]
        if not corpora:
            continue
        for corpus in corpora:
            cells = []
            for result in loaded.values():
                value = f1(result, corpus, entity_type)
                cells.append("–" if value is None else f"{value:.1f}" + ("" if learnt(result, corpus, entity_type) else " †"))
            rows.append([entity_type, corpus, *cells])
        predicting = {n: r for n, r in loaded.items() if any(f1(r, c, entity_type) is not None for c in corpora)}
        common = [c for c in corpora if all(f1(r, c, entity_type) is not None for r in predicting.values())]
        crossing = {n: r for n, r in predicting.items() if any(not learnt(r, c, entity_type) for c in common)}
        unseen = [c for c in common if all(not learnt(r, c, entity_type) for r in crossing.values())]
        rows += [row for row in (macro_row(entity_type, "macro", common, predicting),
                                 macro_row(entity_type, "cross-corpus macro", unseen, crossing)) if row]
    header = ["type", "test set", *loaded]
    note = ("\nF1 on each test set's own annotated types; † the pipeline never learnt that type from that corpus; – not scored "
            "(the pipeline does not predict the type, or was not run on that test set).\n")
    return markdown_table(header, rows) + note
