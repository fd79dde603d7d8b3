"""spaCy corpus readers registered by spacy-biolm.

The reader is declared as a ``spacy_readers`` entry point, so spaCy finds it by name without
``spacy_biolm`` being imported first. This module is imported on registry look-ups: keep its
imports light (spaCy only; no torch, no transformers).
"""

from pathlib import Path
from typing import Callable, Iterable, Iterator, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from .conll import SCHEMES, _check_label, conll_to_docs
from .corpus_files import check_limit, existing_corpus_file, first, unannotated_copy

__all__ = ["ConllNerCorpus", "create_conll_ner_reader"]


class ConllNerCorpus:
    """Callable corpus: ``corpus(nlp)`` yields one ``Example`` per Doc of a CoNLL NER file.

    The file is re-read on every call (one call per training epoch), so memory use does not grow
    with the corpus size.
    """

    def __init__(
        self,
        path: Union[str, Path],
        scheme: str = "auto",
        label: str = "ENTITY",
        n_sents: int = 1,
        limit: int = 0,
    ):
        self.path = existing_corpus_file(path, "ConllNerCorpus", "CoNLL NER file")
        if scheme not in SCHEMES:
            raise ValueError(f"Unknown NER scheme {scheme!r}; expected one of {sorted(SCHEMES)}")
        _check_label(label)
        if not isinstance(n_sents, int) or n_sents < 1:
            raise ValueError(f"n_sents must be a positive integer, got {n_sents!r}")
        self.scheme = scheme
        self.label = label
        self.n_sents = n_sents
        self.limit = check_limit(limit)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        """Yield Examples whose predicted Doc has exactly the gold tokens (no tokenizer run)."""
        docs = conll_to_docs(
            self.path, nlp.vocab, scheme=self.scheme, label=self.label, n_sents=self.n_sents
        )
        for reference in first(docs, self.limit):
            yield Example(unannotated_copy(reference), reference)


@registry.readers("spacy-biolm.ConllNerCorpus.v1")
def create_conll_ner_reader(
    path: Path,
    scheme: str = "auto",
    label: str = "ENTITY",
    n_sents: int = 1,
    limit: int = 0,
) -> Callable[[Language], Iterable[Example]]:
    """Read a CoNLL BIO NER file directly as training or evaluation data.

    The CoNLL counterpart of ``spacy.Corpus.v1``: no ``spacy convert`` step and no ``.spacy`` file
    are needed. Each Example's reference Doc carries ``doc.ents`` from the BIO tags (``O`` tokens
    are marked as non-entities, i.e. the annotation is complete); its predicted Doc has the same
    tokens, unannotated, so alignment is exact.

    Example config::

        [corpora.train]
        @readers = "spacy-biolm.ConllNerCorpus.v1"
        path = "shared/data/ner/NCBI-disease/biobert/train.tsv"
        scheme = "untyped"
        label = "Disease"
        n_sents = 1
        limit = 0

    Args:
        path: a ``token<TAB>tag`` file, sentences separated by blank lines; ``-DOCSTART-`` lines
            mark document boundaries.
        scheme: ``"typed"`` (``B-Type``/``I-Type``/``O``, alias ``"mtl_iob"``), ``"untyped"``
            (``B``/``I``/``O``, alias ``"biobert"``) or ``"auto"`` (decided by the first entity
            tag; mixing both kinds in one file is an error).
        label: entity label for untyped tags; ignored for typed files.
        n_sents: sentences per Example. 1 gives one Example per sentence, the BioBERT
            evaluation unit; larger values join consecutive sentences (never across a
            ``-DOCSTART-``) and set sentence starts on the reference Doc.
        limit: stop after this many Examples; 0 reads the whole file.

    Returns:
        A callable that takes ``nlp`` and yields ``Example`` objects, re-reading the file on each
        call.

    Raises:
        FileNotFoundError / ValueError: when the reader is created with a missing file or a bad
            option. ``spacy_biolm.errors.CorpusFormatError`` (``path:line: message``) while
            reading a malformed line.
    """
    return ConllNerCorpus(path, scheme=scheme, label=label, n_sents=n_sents, limit=limit)
