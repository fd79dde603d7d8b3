"""The release's row of ``yes_no``.

Its headline is the macro F1 of the two answers (always "yes" scores F1(no) = 0, so each F1 alone
flatters one side); the paper's macro value is the mean of its F1 yes and F1 no (indices 2 and 5).
"""

from ..release_row import ReleaseRow

__all__ = ["RELEASE_ROW"]

RELEASE_ROW = ReleaseRow("yes/no answers", "BioASQ yes/no test (Bio-ELECTRA)",
                         (("yes_no_f_yes", "F1 yes"), ("yes_no_f_no", "F1 no")), "yes_no_macro_f", "macro F1",
                         ("bio_electra_2020", ("yesno_bioasq8b", "bio_electra"), (2, 5)))
