"""What a component's row of the release's score table is: :class:`ReleaseRow`.

Each released component defines its row beside itself (``pipes/<component>/release_row.py``, or a
constant in its scorer's module); :mod:`.release_rows` gathers them. Definitions only, stdlib only:
``evaluation/release_scores.py`` reads the scores.
"""

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

__all__ = ["ReleaseRow", "PaperValue"]

#: Where the paper's headline value is: (source in paper_results.json, path to the model's list of
#: values, indices averaged in that list). Where a paper reports per batch (ELECTRAMed's five
#: BioASQ 7b batches), its value is the mean over the batches.
PaperValue = Tuple[str, Tuple[str, ...], Tuple[int, ...]]


@dataclass(frozen=True)
class ReleaseRow:
    """One component's row: what it does, its test set, the scores the row shows ((key in the
    evaluation JSON, column title)), its headline metric (key and title), the paper's value of
    it (None: no paper reports it), the baselines its scorer reports beside our score
    ({title: key in the same scores}) and the keys of further ``metrics`` that README's table
    shows beside the headline (ChemProt's end to end beside its gold-entity F1)."""

    task: str
    test_set: str
    metrics: Tuple[Tuple[str, str], ...]
    headline: str
    headline_title: str
    paper: Optional[PaperValue]
    scorer_baselines: Dict[str, str] = field(default_factory=dict)
    beside: Tuple[str, ...] = ()
