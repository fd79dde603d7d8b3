"""An ``ner`` for a fixed set of entity types (``typed_ner``), for corpora that each annotate some types.

One ``typed_ner`` per corpus's types, all listening to one ``transformer``, gives one ``doc.ents``
in which no corpus teaches that another's type is no entity (see :mod:`.component`).
"""
