"""The annotate tests' pipeline: configs/ner.cfg on the tiny encoder, briefly trained on disease
sentences (so it finds entities), with a sentencizer, saved to a folder as a user's pipeline is."""

from pathlib import Path

import pytest


def write_inputs(folder: Path, n_shards: int, docs_per_shard: int) -> Path:
    """``n_shards`` JSONL shards of disease sentences (ids ``s<shard>-<doc>``)."""
    import json

    from spacy_biolm.testing import disease_sentences

    folder.mkdir(parents=True, exist_ok=True)
    sentences = [" ".join(words) for words, _ in disease_sentences(n_shards * docs_per_shard, seed=3)]
    for shard in range(n_shards):
        rows = [{"id": f"s{shard}-{i}", "text": sentences[shard * docs_per_shard + i] + (" It is rare ." * (i % 3))}
                for i in range(docs_per_shard)]
        (folder / f"part{shard:02d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf8")
    return folder


@pytest.fixture(scope="session")
def ner_pipeline_dir(tmp_path_factory, tiny_encoder) -> Path:
    import spacy
    from spacy.training import Example

    from spacy_biolm.testing import REPO, disease_sentences, overfit

    config = spacy.util.load_config(REPO / "configs" / "ner.cfg", overrides={"paths.encoder": str(tiny_encoder)},
                                    interpolate=True)
    nlp = spacy.util.load_model_from_config(config, auto_fill=True)
    examples = []
    for words, spans in disease_sentences(8, seed=1):
        doc = spacy.tokens.Doc(nlp.vocab, words=words)
        doc.ents = [spacy.tokens.Span(doc, start, end, label="Disease") for start, end in spans]
        examples.append(Example(nlp.make_doc(doc.text), doc))
    overfit(nlp, examples, steps=15, learn_rate=0.005)
    nlp.add_pipe("sentencizer", first=True)
    out = tmp_path_factory.mktemp("annotate_pipeline") / "pipeline"
    nlp.to_disk(out)
    return out
