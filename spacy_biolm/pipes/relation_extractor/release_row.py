"""The release's row of ``relation_extractor``."""

from ..release_row import ReleaseRow

__all__ = ["RELEASE_ROW"]

RELEASE_ROW = ReleaseRow("gene-disease associations", "GAD fold 1 test (gold entities)",
                         (("rel_micro_p", "P"), ("rel_micro_r", "R"), ("rel_micro_f", "F1")), "rel_micro_f", "F1",
                         ("bio_electra_2020", ("re", "GAD", "bio_electra"), (2,)))
