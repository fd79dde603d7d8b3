"""Relation extraction between entity pairs (GAD, EU-ADR, ChemProt).

``relation_extractor`` classifies candidate pairs from ``doc.ents`` and writes
``doc._.relations``. Two input modes, each a registered architecture chosen in the config:
``spacy-biolm.RelationAnonymised.v1`` (one encoder pass per pair, the target entities replaced by
typed placeholders, as BioBERT and Bio-ELECTRA) and ``spacy-biolm.RelationFast.v1`` (one pass per
sentence through the shared ``transformer``, entity spans pooled).
"""
