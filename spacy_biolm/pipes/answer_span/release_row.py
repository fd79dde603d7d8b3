"""The release's row of ``answer_span``.

Its headline is BioASQ's own per-question metric: per-snippet SQuAD EM (on Bio-ELECTRA's dev.json,
in qa_results.md) sets a reader of one snippet against a frequency baseline that counts words over
all of the question's snippets; per question, both see all of them. ELECTRAMed reports the five
BioASQ 7b batches: its value is the mean over them.
"""

from ..release_row import ReleaseRow

__all__ = ["RELEASE_ROW"]

RELEASE_ROW = ReleaseRow("factoid answers", "BioASQ 7b factoid test (5 batches, golden answers)",
                         (("answer_strict_acc", "strict"), ("answer_lenient_acc", "lenient")),
                         "answer_strict_acc", "strict accuracy", ("electramed_2021", ("qa_bioasq7b",), (0,)))
