"""The annotate tests' inputs (their pipeline is the root conftest's ``ner_pipeline_dir``)."""

from pathlib import Path



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
