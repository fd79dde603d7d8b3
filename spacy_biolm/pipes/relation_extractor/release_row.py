"""The release's rows of its relation extractors: ``relation_extractor`` (GAD) and
``relation_chemprot`` (ChemProt, on gold entities and end to end)."""

from ..release_row import ReleaseRow

__all__ = ["RELEASE_ROW", "CHEMPROT_RELEASE_ROW"]

RELEASE_ROW = ReleaseRow("gene-disease associations", "GAD fold 1 test (gold entities)",
                         (("rel_micro_p", "P"), ("rel_micro_r", "R"), ("rel_micro_f", "F1")), "rel_micro_f", "F1",
                         ("bio_electra_2020", ("re", "GAD", "bio_electra"), (2,)))

# The paper scores every ChemProt test sentence with masked entities; this row, the sentences with a
# relation whose words SciBERT's file gives back (spacy_biolm/corpora/chemprot_text.py).
CHEMPROT_RELEASE_ROW = ReleaseRow(
    "chemical-gene relations (CPR:3,4,5,6,9)",
    "ChemProt test sentences with a relation, their words restored (gold entities; end to end: the entities the release finds)",
    (("rel_micro_p", "P"), ("rel_micro_r", "R"), ("rel_micro_f", "F1"), ("end_to_end_micro_f", "F1 end to end"),
     ("end_to_end_baseline_micro_f", "F1 end to end, all positive")),
    "rel_micro_f", "F1", ("bio_electra_2020", ("re", "CHEMPROT_micro", "bio_electra"), (2,)),
    beside=("end_to_end_micro_f", "end_to_end_baseline_micro_f"))
