"""The release's entity types, and what each NER corpus's labels become: one documented table.

The release recognises five types:

* ``DISEASE``: diseases and disorders, as NCBI-disease marks them;
* ``GENE``: genes and gene products (proteins, transcripts, protein complexes) by name, as BC2GM's
  GENE and the BioNLP tasks' Protein mark them;
* ``CHEMICAL``: chemicals and drugs (BioNLP's Simple_chemical);
* ``SPECIES``: organisms, mostly species (with strains, viruses and "patients", "human"), as
  LINNAEUS marks them;
* ``CELL``: cells, cell types and cell lines (JNLPBA's cell_type and cell_line, BioNLP13CG's Cell).

:data:`ENTITY_TYPES` gives every label that occurs in a corpus's MTL-Bioinformatics-2016 files
(``shared/data/ner/<corpus>/mtl_iob/{train,devel,test}.tsv``; checked by
``corpora/tests/test_entity_types.py``) one fate:

* a release type: the label's mentions become entities of it. A label is mapped to a type only when
  the corpus marks *every* mention of that type (with this label or with others mapped to it), so
  the types a corpus's labels are mapped to are the types it annotates completely
  (:func:`annotated_types`, what its Docs record:
  :func:`spacy_biolm.doc_data.set_annotated_entity_types`);
* :data:`MISSING`: the label holds mentions of a release type but is not that type: a part of it
  (BioNLP13CG's Cancer is a subset of the diseases, the others left unmarked) or a mixture
  (CRAFT's Taxon has "animals" and "mammals" beside the species). Its tokens get spaCy's missing
  entity tag, so the corpus teaches neither that they are entities of the type nor that they are
  not;
* :data:`OUTSIDE` (``"O"``): the label holds no release type (tissues, Gene Ontology terms); its
  tokens are written as outside any entity, like the corpus's unlabelled tokens.

Each entry is ``label: (fate, reason)``; the reason, one line, is there wherever the fate is not
obvious from the label's name. A label of a file that is not in its corpus's table is a
:class:`~spacy_biolm.errors.CorpusFormatError` at conversion
(:func:`spacy_biolm.corpora.conll.convert_ner`).

:func:`conversion_report` and :func:`report_markdown` say what the table did to converted corpora
(``spacy-biolm data entity-types-report``; ``projects/entity-types/results/``).

Pure Python: imported by the CoNLL converter, which the ``spacy_readers`` entry point loads.
"""

from pathlib import PurePath
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from .splits import NER_SPLITS

__all__ = ["RELEASE_TYPES", "MISSING", "OUTSIDE", "ENTITY_TYPES", "label_fates", "annotated_types", "conversion_report",
           "report_markdown"]

#: The entity types the release recognises, in the order its tables list them.
RELEASE_TYPES = ("DISEASE", "GENE", "CHEMICAL", "SPECIES", "CELL")
#: Fate of a label whose tokens get the missing entity tag.
MISSING = "MISSING"
#: Fate of a label whose tokens are written as outside any entity.
OUTSIDE = "O"

_BIONLP_PROTEIN = ("GENE", "BioNLP's Protein: genes and gene products by name")
_ANATOMY = (OUTSIDE, "anatomy other than cells: no release type")

# corpus -> {label in its files: (fate, reason)}
ENTITY_TYPES: Dict[str, Dict[str, Tuple[str, str]]] = {
    "NCBI-disease": {"Disease": ("DISEASE", "")},
    "BC2GM": {"GENE": ("GENE", "")},
    "LINNAEUS": {"Species": ("SPECIES", "")},
    "JNLPBA": {
        "protein": ("GENE", "GENIA proteins, their families, complexes and subunits: gene products"),
        "DNA": ("GENE", "genes and the DNA regions named after them (IL-2 gene), as in BioBERT's JNLPBA gene type"),
        "RNA": ("GENE", "transcripts (c-fos mRNA): gene products (BioBERT's JNLPBA gene type is protein + DNA + RNA)"),
        "cell_type": ("CELL", "cell types (T cells); with cell_line every cell mention (generic 'cells' left outside)"),
        "cell_line": ("CELL", "cell lines (Jurkat cells) are CELL too, as in BioNLP13CG's Cell"),
    },
    "BioNLP13CG": {
        "Gene_or_gene_product": ("GENE", ""),
        "Simple_chemical": ("CHEMICAL", ""),
        "Organism": ("SPECIES", "organisms as LINNAEUS marks them: 'patients', 'human', 'mice', viruses"),
        "Cell": ("CELL", "cells, cell types and cell lines; generic 'cells' and 'cellular' too, which JNLPBA leaves outside"),
        "Cancer": (MISSING, "cancers are a subset of DISEASE: BioNLP13CG leaves the other diseases unmarked"),
        "Pathological_formation": (MISSING, "tumours, lesions, wounds, ulcerative colitis: some are diseases, some not"),
        "Amino_acid": (MISSING, "free amino acids (tyrosine) are chemicals, residues and mutations (Ser88, V600E) are not"),
        "Anatomical_system": _ANATOMY,
        "Cellular_component": _ANATOMY,
        "Developing_anatomical_structure": _ANATOMY,
        "Immaterial_anatomical_entity": _ANATOMY,
        "Multi-tissue_structure": _ANATOMY,
        "Organ": _ANATOMY,
        "Organism_subdivision": _ANATOMY,
        "Organism_substance": _ANATOMY,
        "Tissue": _ANATOMY,
    },
    "BioNLP13PC": {
        "Gene_or_gene_product": ("GENE", ""),
        "Simple_chemical": ("CHEMICAL", ""),
        "Complex": ("GENE", "protein complexes (NF-kappaB, AP-1, mTORC1), which JNLPBA's protein and BC2GM's GENE mark"),
        "Cellular_component": (OUTSIDE, "organelles and compartments (nucleus, membrane): no release type"),
    },
    "BioNLP11ID": {
        "Protein": _BIONLP_PROTEIN,
        "Chemical": ("CHEMICAL", ""),
        "Organism": ("SPECIES", "species and strains (Y. pestis, H37Rv), as LINNAEUS marks them"),
        "Regulon-operon": (MISSING, "operons and regulons (dlt, pdu): groups of genes, gene mentions under some guidelines only"),
    },
    "BioNLP09": {"Protein": _BIONLP_PROTEIN},
    "BioNLP11EPI": {"Protein": _BIONLP_PROTEIN},
    "BioNLP13GE": {"Protein": _BIONLP_PROTEIN},
    "Ex-PTM": {"Protein": _BIONLP_PROTEIN},
    "AnatEM": {
        "Anatomy": (MISSING, "organs to cells, and cancers ('tumor', 'breast cancer'): CELL and DISEASE mentions among others; "
                             "AnatEM annotates no release type completely"),
    },
    "CRAFT": {
        "GGP": ("GENE", "genes and gene products (CRAFT's Entrez Gene and Protein Ontology concepts)"),
        "Taxon": (MISSING, "every NCBI Taxonomy rank: 'animals', 'mammals', 'bacteria' too, which LINNAEUS leaves outside"),
        "CHEBI": (MISSING, "ChEBI classes well beyond the chemicals the others mark: 'protein', 'mRNA', 'electron', 'molecular'"),
        "CL": (MISSING, "Cell Ontology types only: cell lines (HeLa, COS, MEFs, ES cells) are left outside"),
        "GO": (OUTSIDE, "Gene Ontology terms (nucleus, chromosome, antibody): components, processes, functions"),
        "SO": (OUTSIDE, "Sequence Ontology terms (gene, allele, mutant, exon): sequence features, not named genes"),
    },
}


def _table(corpus: str) -> Dict[str, Tuple[str, str]]:
    try:
        return ENTITY_TYPES[corpus]
    except KeyError:
        raise ValueError(f"no entity-type table for corpus {corpus!r}; known: {', '.join(ENTITY_TYPES)}") from None


def label_fates(corpus: str) -> Dict[str, str]:
    """``{label: fate}`` of ``corpus``: a release type, :data:`MISSING` or :data:`OUTSIDE`.
    ValueError names the known corpora when ``corpus`` has no table."""
    return {label: fate for label, (fate, _) in _table(corpus).items()}


def annotated_types(corpus: str) -> Tuple[str, ...]:
    """The release types ``corpus`` annotates completely (those its labels are mapped to), in
    :data:`RELEASE_TYPES` order; empty for a corpus whose labels are all missing or outside."""
    fates = set(label_fates(corpus).values())
    return tuple(t for t in RELEASE_TYPES if t in fates)


def conversion_report(conversions: Mapping[str, Mapping[str, Mapping[str, Any]]],
                      exclude_test: Sequence[str] = ()) -> Dict[str, Any]:
    """What the table did to converted corpora: ``conversions`` is ``{corpus: {split: statistics}}``
    (:func:`~spacy_biolm.corpora.splits.convert_ner_splits` with ``corpus``), ``exclude_test`` the
    test files their train and devel sentences were checked against. Per corpus: the types it
    annotates completely, each label's fate, reason and mentions per split, and each split's
    sentences, entities by type, missing tokens and dropped sentences."""
    corpora = {}
    for corpus, splits in conversions.items():
        corpora[corpus] = {
            "annotated_types": list(annotated_types(corpus)),
            "labels": {label: {"fate": fate, "reason": reason,
                               "mentions": {split: stats["file_labels"].get(label, 0) for split, stats in splits.items()}}
                       for label, (fate, reason) in _table(corpus).items()},
            "splits": {split: {key: stats[key] for key in _REPORTED if key in stats} for split, stats in splits.items()},
        }
    return {"release_types": list(RELEASE_TYPES), "exclude_test": list(exclude_test), "corpora": corpora}


# The statistics of a split that the report keeps.
_REPORTED = ("sentences", "tokens", "entities", "labels", "missing_tokens", "dropped", "dropped_lines", "dropped_by_test")


def _markdown(header: Sequence[str], rows: Iterable[Sequence[object]]) -> List[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def _test_set(path: str) -> str:
    """A test file's corpus: its folder's folder (``assets/ner/<corpus>/mtl_iob/test.tsv``)."""
    return PurePath(path).parent.parent.name or path


def _kept(stats: Optional[Mapping[str, Any]]) -> str:
    """A split's sentences written, with the dropped ones in brackets; "-" for a split not converted."""
    if stats is None:
        return "-"
    return f"{stats['sentences']:,}" + (f" ({stats['dropped']:,})" if stats.get("dropped") else "")


def _corpus_row(name: str, corpus: Mapping[str, Any]) -> List[object]:
    splits = corpus["splits"]
    entities = {t: sum(stats["labels"].get(t, 0) for stats in splits.values()) for t in RELEASE_TYPES}
    return [name, ", ".join(corpus["annotated_types"]) or "none", *(_kept(splits.get(split)) for split in NER_SPLITS),
            ", ".join(f"{t} {n:,}" for t, n in entities.items() if n) or "none",
            f"{sum(stats.get('missing_tokens', 0) for stats in splits.values()):,}"]


def _drop_row(name: str, split: str, stats: Mapping[str, Any]) -> List[object]:
    by_test = sorted(stats["dropped_by_test"].items(), key=lambda item: -item[1])
    return [name, split, stats["dropped"], ", ".join(f"{_test_set(test)} {n}" for test, n in by_test),
            ", ".join(map(str, stats["dropped_lines"]))]


def _label_row(name: str, label: str, row: Mapping[str, Any]) -> List[object]:
    mentions = " / ".join(f"{row['mentions'][split]:,}" if split in row["mentions"] else "-" for split in NER_SPLITS)
    return [name, label, {MISSING: "missing", OUTSIDE: "outside"}.get(row["fate"], row["fate"]), mentions, row["reason"]]


def report_markdown(report: Mapping[str, Any]) -> str:
    """Markdown tables of a :func:`conversion_report`: the corpora (types annotated completely,
    sentences written and dropped, entities and missing tokens over all splits), the sentences
    dropped by the test sets they share 13 words with, and every label's fate."""
    corpora = report["corpora"]
    lines = _markdown(["corpus", "annotates completely", "train sentences (dropped)", "devel sentences (dropped)",
                       "test sentences", "entities written (all splits)", "missing tokens (all splits)"],
                      (_corpus_row(name, corpus) for name, corpus in corpora.items()))
    lines += ["", "Train and devel sentences dropped for sharing 13 words with a test set (one sentence can share them "
                  "with several; first lines of the first ten):", ""]
    lines += _markdown(["corpus", "split", "dropped", "test sets shared with", "first lines"],
                       (_drop_row(name, split, stats) for name, corpus in corpora.items()
                        for split, stats in corpus["splits"].items() if stats.get("dropped")))
    lines += ["", "Every label of the corpora's files, its mentions in the sentences written:", ""]
    lines += _markdown(["corpus", "label", "becomes", "mentions train / devel / test", "why"],
                       (_label_row(name, label, row) for name, corpus in corpora.items()
                        for label, row in corpus["labels"].items()))
    return "\n".join(lines) + "\n"
