"""Annotate a corpus with a pipeline: PubMed XML, JSONL or plain text in, one JSONL (and optionally
DocBin) output shard per input shard, resumable, on one machine (:mod:`.runner`) or a Ray cluster
(:mod:`.ray_runner`, the ``spacy-biolm[ray]`` extra). ``spacy-biolm annotate`` is the command."""

from .readers import Record, Reject, find_input_shards, read_shard
from .records import doc_to_record
from .runner import annotate, annotate_shard, plan_annotation
from .shards import OutputShard, ShardWriter, plan_output_shards, prepare_output_dir

__all__ = [
    "OutputShard",
    "Record",
    "Reject",
    "ShardWriter",
    "annotate",
    "annotate_shard",
    "doc_to_record",
    "find_input_shards",
    "plan_annotation",
    "plan_output_shards",
    "prepare_output_dir",
    "read_shard",
]
