"""What the release prints for README's usage example, recorded by the run that built it.

README's first snippet runs the release on :data:`SAMPLE_TEXT`; a hand-copied output goes stale with
the next run (it once showed a relation no fresh release printed). The ``assemble`` step records
the real output in ``results/release.json`` (``sample``) and README's scores block shows it.
"""

from typing import Any, Dict

__all__ = ["SAMPLE_TEXT", "sample_output", "sample_markdown"]

# A gene-disease association, a chemical-gene relation (ChemProt's CPR:6, antagonist) and the three further
# entity types (CHEMICAL, CELL, SPECIES) of the release.
SAMPLE_TEXT = "Germline mutations in BRCA1 cause hereditary breast cancer. Tamoxifen, an antagonist of the estrogen receptor, slowed the growth of MCF-7 cells in mice."


def sample_output(nlp, text: str = SAMPLE_TEXT) -> Dict[str, Any]:
    """The entities, relations and hallmarks above their thresholds that ``nlp`` finds in ``text``,
    as README's snippet prints them (scores rounded to 2 decimals)."""
    from ..pipes.multilabel_thresholds import assigned_labels

    doc = nlp(text)
    relations = getattr(doc._, "relations", None) if doc.has_extension("relations") else None
    record: Dict[str, Any] = {
        "text": text,
        "entities": [[ent.text, ent.label_] for ent in doc.ents],
        "relations": [[r.head.text, r.tail.text, r.label, round(float(r.score), 2)] for r in relations or []],
    }
    if "hallmarks" in nlp.pipe_names:  # README's hallmarks snippet: the labels its tuned thresholds assign
        thresholds = nlp.config["components"]["hallmarks"].get("scorer", {}).get("thresholds") or {}
        record["hallmarks"] = assigned_labels(doc.cats, thresholds)
    return record


def sample_markdown(sample: Dict[str, Any]) -> str:
    """README's lines for a recorded :func:`sample_output`."""
    entities = [tuple(entity) for entity in sample["entities"]]
    relations = [tuple(relation) for relation in sample["relations"]]
    lines = [f"On README's example text (\"{sample['text']}\") this release prints `{entities}` and `{relations}`."]
    if "hallmarks" in sample:
        lines.append(f"Its hallmarks above their thresholds: `{sample['hallmarks']}`.")
    return " ".join(lines) + "\n"
