"""Every released component's row of the score table, by component name: the one registry.

A new released component defines its :class:`~.release_row.ReleaseRow` beside itself and adds one
entry here; ``evaluation/release_scores.py`` reads this mapping.
"""

from typing import Dict

from .answer_reranker.release_row import RELEASE_ROW as ANSWER_RERANKER
from .answer_span.release_row import RELEASE_ROW as ANSWER_SPAN
from .multilabel_thresholds import HALLMARKS_RELEASE_ROW
from .relation_extractor.release_row import CHEMPROT_RELEASE_ROW as RELATION_CHEMPROT
from .relation_extractor.release_row import RELEASE_ROW as RELATION_EXTRACTOR
from .release_row import ReleaseRow
from .typed_ner.release_row import NER, NER_CELL, NER_CHEMICAL, NER_GENE, NER_SPECIES
from .yes_no.release_row import RELEASE_ROW as YES_NO

__all__ = ["RELEASE_ROWS"]

#: In the table's order.
RELEASE_ROWS: Dict[str, ReleaseRow] = {
    "ner": NER,
    "ner_gene": NER_GENE,
    "ner_chemical": NER_CHEMICAL,
    "ner_species": NER_SPECIES,
    "ner_cell": NER_CELL,
    "relation_extractor": RELATION_EXTRACTOR,
    "relation_chemprot": RELATION_CHEMPROT,
    "yes_no": YES_NO,
    "answer_span": ANSWER_SPAN,
    "answer_reranker": ANSWER_RERANKER,
    "hallmarks": HALLMARKS_RELEASE_ROW,
}
