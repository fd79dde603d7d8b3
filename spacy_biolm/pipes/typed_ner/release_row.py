"""The release's rows of its two ``typed_ner`` components: ``ner`` (DISEASE) and ``ner_gene`` (GENE)."""

from ..release_row import ReleaseRow

__all__ = ["NER", "NER_GENE"]

_PRF = (("ents_p", "P"), ("ents_r", "R"), ("ents_f", "F1"))

NER = ReleaseRow("diseases", "NCBI-disease test", _PRF, "ents_f", "F1",
                 ("bio_electra_2020", ("ner", "NCBI-disease", "bio_electra"), (2,)))
NER_GENE = ReleaseRow("genes and proteins", "BC2GM test", _PRF, "ents_f", "F1",
                      ("bio_electra_2020", ("ner", "BC2GM", "bio_electra"), (2,)))
