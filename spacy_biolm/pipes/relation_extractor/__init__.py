"""Relation extraction between entity pairs (GAD, EU-ADR, ChemProt).

``relation_extractor`` classifies candidate pairs from ``doc.ents`` and writes
``doc._.relations``. Two input modes: ``anonymised`` (one encoder pass per pair, the target
entities replaced by typed placeholders, as BioBERT and Bio-ELECTRA) and ``fast`` (one pass per
sentence through the shared ``transformer``, entity spans pooled).
"""
