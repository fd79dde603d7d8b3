"""The ``spacy-biolm`` command line: the steps of the recipe that spaCy's own CLI does not cover.

One sub-app per area, each command a thin wrapper over a library function:

    spacy-biolm data       assets, collect-text, convert, convert-splits, hoc-split, convert-hoc
    spacy-biolm pretrain   vocab, extend-vocab, run
    spacy-biolm relations  convert, train, evaluate, cv, table
    spacy-biolm qa         convert, corpora, evaluate, evaluate-project, tune-lexical-weight, seeds-table
    spacy-biolm evaluate   seeds, encoders, seeds-table, tune, ner-table, release-meta, entity-types, entity-corpora, entity-errors,
                           held-out, multitask, listener-gradients, hoc, hoc-objectives, hoc-test
    spacy-biolm docs       steps-table, scores-table, encoders-table, one-encoder-table, includes, results-index
    spacy-biolm profile    show, run (the project with a named budget: default, full)
    spacy-biolm bench      list, run
    spacy-biolm release    tune-thresholds, halve, share-encoder, add-entity-types, package (change or build a saved pipeline)
    spacy-biolm annotate   INPUT... OUTPUT (a corpus through a pipeline, one machine or Ray)
    spacy-biolm timed      NAME -- COMMAND (wall time and peak memory of a run: training steps, make all/test)

``python -m spacy_biolm ...`` runs the same app with the running interpreter (what project.yml uses).
"""

import typer

from . import bench, data, docs, evaluate, pretrain, profile, qa, relations, release
from .annotate import annotate_cli
from .timed import timed_cli

__all__ = ["app", "main"]

app = typer.Typer(
    name="spacy-biolm",
    help="Biomedical encoders for spaCy: corpora, pretraining, task training and evaluation, tables, benchmarks.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
)

# In the order of the recipe (project.yml's stages), then the tooling around it.
app.add_typer(data.app, name="data")
app.add_typer(pretrain.app, name="pretrain")
app.add_typer(relations.app, name="relations")
app.add_typer(qa.app, name="qa")
app.add_typer(evaluate.app, name="evaluate")
app.add_typer(docs.app, name="docs")
app.add_typer(profile.app, name="profile")
app.add_typer(bench.app, name="bench")
app.add_typer(release.app, name="release")
# One command, not a sub-app: `spacy-biolm annotate INPUT... OUTPUT`.
app.command("annotate")(annotate_cli)
app.command("timed", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(timed_cli)


def main() -> None:
    """Entry point of the ``spacy-biolm`` console script."""
    app()
