"""spaCy's rule-based sentencizer, without the boundaries biomedical text does not have.

spaCy's ``sentencizer`` starts a sentence after every full stop. Biomedical text puts full stops
inside sentences: abbreviated species (``P. falciparum``, ``H. pylori``), abbreviations (``et al.``,
``vs.``), decimals once a tokenizer splits them (``P <.001``, ``67.9%``) and names in corpora
tokenised around every punctuation mark (BC2GM's ``Kv1 . 7``, ``PU . 1``). On HoC's test abstracts
450 of the 3,934 sentences spaCy's sentencizer makes start at a digit or a lower-case word.
A sentence cut there costs the release's relation extractor every pair it splits (its candidate
window is the sentence): 8 of GAD's 534 test sentences were cut between the two entities (1 is
with this component: a text of two sentences).

``biomedical_sentencizer`` finds spaCy's boundaries, then removes each one before a token that
starts with a lower-case letter or a digit: an English sentence starts with neither, a species
name and a version number continue one. The price is the sentence that does start with a
lower-case gene name (``p53 binds ...``): it is read with the sentence before it, which a
candidate window can afford (it only adds pairs to judge) and a cut cannot.

It saves and loads as spaCy's ``sentencizer`` does (``punct_chars``, ``overwrite``), so a pipeline
trained with ``sentencizer`` can switch (``spacy-biolm release replace-sentencizer``).
"""

from typing import Callable, List, Optional, Sequence

from spacy.language import Language
from spacy.pipeline import Sentencizer
from spacy.tokens import Doc

from ...versions import check_built_version

__all__ = ["BiomedicalSentencizer", "make_biomedical_sentencizer", "continues_sentence", "replace_sentencizers"]


def continues_sentence(text: str) -> bool:
    """Whether a token with this text continues the sentence before it, whatever precedes it: it
    starts with a lower-case letter or a digit."""
    return bool(text) and (text[0].islower() or text[0].isdigit())


class BiomedicalSentencizer(Sentencizer):
    """spaCy's :class:`~spacy.pipeline.Sentencizer` whose sentences never start with a lower-case
    letter or a digit (see the module docstring)."""

    def predict(self, docs: Sequence[Doc]) -> List[List[bool]]:
        guesses = super().predict(docs)
        for doc, starts in zip(docs, guesses):
            for i in range(1, len(starts)):
                if starts[i] and continues_sentence(doc[i].text):
                    starts[i] = False
        return guesses


@Language.factory(
    "biomedical_sentencizer",
    default_config={"punct_chars": None, "overwrite": False, "scorer": {"@scorers": "spacy.senter_scorer.v1"}},
    assigns=["token.is_sent_start", "doc.sents"],
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_biomedical_sentencizer(
    nlp: Language, name: str, punct_chars: Optional[List[str]], overwrite: bool, scorer: Optional[Callable]
) -> BiomedicalSentencizer:
    """Factory of the ``biomedical_sentencizer`` pipeline component: spaCy's ``sentencizer``
    settings (``punct_chars``: the characters that end a sentence, default spaCy's; ``overwrite``:
    replace boundaries the Doc already has), with no sentence starting at a token that begins with
    a lower-case letter or a digit."""
    check_built_version(nlp.meta)  # the pipeline's recorded spacy-biolm version vs this one
    return BiomedicalSentencizer(name, punct_chars=punct_chars, overwrite=overwrite, scorer=scorer)


def replace_sentencizers(nlp: Language) -> List[str]:
    """Replace, in place, each spaCy ``sentencizer`` of the pipeline by a ``biomedical_sentencizer``
    with its settings, at its place and under its name; return the names replaced."""
    replaced = []
    for name in list(nlp.component_names):
        if nlp.get_pipe_meta(name).factory != "sentencizer":
            continue
        old = nlp.get_pipe(name)
        nlp.replace_pipe(name, "biomedical_sentencizer",
                         config={"punct_chars": sorted(old.punct_chars), "overwrite": old.overwrite})
        replaced.append(name)
    return replaced
