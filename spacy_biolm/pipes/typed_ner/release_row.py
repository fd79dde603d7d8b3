"""The release's rows of its ``typed_ner`` components: ``ner`` (DISEASE), ``ner_gene`` (GENE) and the
three types projects/entity-types added, each scored on every test set of the corpora that teach it
(the macro average: one corpus's guidelines are not the type)."""

from ..release_row import ReleaseRow

__all__ = ["NER", "NER_GENE", "NER_CHEMICAL", "NER_SPECIES", "NER_CELL"]

_PRF = (("ents_p", "P"), ("ents_r", "R"), ("ents_f", "F1"))

NER = ReleaseRow("diseases", "NCBI-disease test", _PRF, "ents_f", "F1",
                 ("bio_electra_2020", ("ner", "NCBI-disease", "bio_electra"), (2,)))
NER_GENE = ReleaseRow("genes and proteins", "BC2GM test", _PRF, "ents_f", "F1",
                      ("bio_electra_2020", ("ner", "BC2GM", "bio_electra"), (2,)))
# No paper of paper_results.json reports these corpora's macro averages (Bio-ELECTRA's LINNAEUS is one of three).
NER_CHEMICAL = ReleaseRow("chemicals", "BioNLP13CG, BioNLP13PC, BioNLP11ID test (macro)", _PRF, "ents_f", "F1", None)
NER_SPECIES = ReleaseRow("species", "LINNAEUS, BioNLP13CG, BioNLP11ID test (macro)", _PRF, "ents_f", "F1", None)
NER_CELL = ReleaseRow("cells, cell types and lines", "BioNLP13CG test", _PRF, "ents_f", "F1", None)
