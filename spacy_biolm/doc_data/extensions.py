"""The ``Doc._`` extensions of spacy-biolm, registered by one idempotent function.

Each extension keeps its value in ``doc.user_data`` (spaCy stores plain-default extensions there,
and ``doc._.relations`` keeps serialisable offsets under :data:`RELATIONS_USER_DATA_KEY`), so every
value survives ``DocBin(store_user_data=True)`` and ``Doc.to_bytes``.
"""

from spacy.tokens import Doc

from .questions import QUESTION_EXTENSIONS
from .relations import RELATIONS_EXTENSION, get_relations, set_relations

__all__ = ["ABBREVIATIONS_EXTENSION", "EXTENSIONS", "register_extensions"]

ABBREVIATIONS_EXTENSION = "abbreviations"

#: Every extension name :func:`register_extensions` makes sure of.
EXTENSIONS = (*QUESTION_EXTENSIONS, RELATIONS_EXTENSION, ABBREVIATIONS_EXTENSION)


def register_extensions() -> None:
    """Register ``Doc._.question``, ``question_id``, ``gold_answers``, ``relations`` and
    ``abbreviations``; an extension that exists already is left as it is, so calling this again
    (or another package, e.g. scispacy, owning a compatible ``Doc._.abbreviations``) is harmless.

    ``spacy_biolm.doc_data`` calls it once when it is imported; every module that reads or writes
    these extensions imports from there.
    """
    for name in QUESTION_EXTENSIONS:
        if not Doc.has_extension(name):
            Doc.set_extension(name, default=None)
    if not Doc.has_extension(RELATIONS_EXTENSION):
        Doc.set_extension(RELATIONS_EXTENSION, getter=get_relations, setter=set_relations)
    if not Doc.has_extension(ABBREVIATIONS_EXTENSION):
        # Read only: the detector assigns a new list to each Doc, so the shared default stays empty.
        Doc.set_extension(ABBREVIATIONS_EXTENSION, default=[])
