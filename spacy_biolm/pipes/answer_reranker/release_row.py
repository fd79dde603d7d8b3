"""The release's row of ``answer_reranker``: MRR, beside the random order its scorer reports."""

from ..release_row import ReleaseRow

__all__ = ["RELEASE_ROW"]

RELEASE_ROW = ReleaseRow("answer-sentence ranking", "BioASQ reranking test (Bio-ELECTRA)", (("rerank_mrr", "MRR"),),
                         "rerank_mrr", "MRR", ("bio_electra_2020", ("reranking_bioasq", "bio_electra"), (0,)),
                         {"random order of the candidates (expected)": "rerank_mrr_random"})
