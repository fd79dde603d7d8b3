"""DocBins the readers cannot use are errors naming the file (and the Doc), not spaCy's bare
"Can't retrieve string for hash" from inside a training loop."""

import pytest
import spacy
from spacy.strings import StringStore
from spacy.tokens import DocBin

from spacy_biolm.corpora.qa import create_qa_reader
from spacy_biolm.corpora.relations import create_relation_reader
from spacy_biolm.errors import CorpusFormatError


def _docbin_without_strings(path):
    """A DocBin written with another vocabulary whose string table was not saved."""
    nlp = spacy.blank("en")
    doc = nlp("Qzxvbrca1 mutations cause Wyzzrtcancer.")
    doc.ents = [doc.char_span(0, 9, "GENEX")]
    docbin = DocBin(store_user_data=True, docs=[doc])
    docbin.strings = StringStore()
    docbin.to_disk(path)
    return path


@pytest.mark.parametrize("make_reader", [create_relation_reader, create_qa_reader])
def test_a_docbin_missing_its_strings_names_the_file_and_doc(make_reader, tmp_path):
    path = _docbin_without_strings(tmp_path / "other_vocab.spacy")
    with pytest.raises(CorpusFormatError, match=r"other_vocab\.spacy: Doc 0 of 1: a string is missing .*E018"):
        list(make_reader(path)(spacy.blank("en")))


@pytest.mark.parametrize("make_reader", [create_relation_reader, create_qa_reader])
def test_a_truncated_docbin_names_the_file(make_reader, tmp_path):
    good = tmp_path / "good.spacy"
    DocBin(docs=[spacy.blank("en")("BRCA1 mutations.")]).to_disk(good)
    half = tmp_path / "half_written.spacy"
    half.write_bytes(good.read_bytes()[: len(good.read_bytes()) // 2])
    with pytest.raises(CorpusFormatError, match=r"half_written\.spacy: not a readable DocBin"):
        list(make_reader(half)(spacy.blank("en")))
    assert [eg.reference.text for eg in make_reader(good)(spacy.blank("en"))] == ["BRCA1 mutations."]
