"""``spacy-biolm data``: fetch the corpora, gather pretraining text, convert NER corpora to DocBins."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import gpu_option, sub_app, user_errors

__all__ = ["app"]

app = sub_app("Corpora: fetch the assets, gather pretraining text, convert NER, document-classification and HoC corpora to DocBins.")


@app.command("assets")
def assets_cli(
    project_dir: Path = typer.Argument(Path("."), help="Project directory (with project.yml)"),
    mirror: Optional[Path] = typer.Option(None, "--mirror", help="Local mirror of the corpora (e.g. ../shared/data)"),
    extra: bool = typer.Option(False, "--extra", help="Also download assets marked 'extra: true' (optional workflows only; without it they are copied from the mirror when it has them, never downloaded)"),
    url_prefix_map: List[str] = typer.Option([], "--url-prefix-map", envvar="SPACY_BIOLM_URL_PREFIX_MAP", help="FROM=TO: download URLs (and git repositories) starting with FROM from TO instead (repeatable; the first match applies), e.g. a corporate mirror or a local server standing in for the upstream hosts; the environment variable takes space-separated pairs, so the project's assets step (make all) uses them too"),
):
    """Fetch project assets, copying checksum-verified files from a local mirror when present."""
    from ..assets import fetch_assets, parse_url_map

    with user_errors():
        url_map = parse_url_map(url_prefix_map)
        report = fetch_assets(project_dir, mirror if mirror and mirror.is_dir() else None, extra=extra, url_map=url_map)
    msg.good(", ".join(f"{len(v)} {k}" for k, v in report.items()))


@app.command("collect-text")
def collect_text_cli(
    output: Path = typer.Argument(..., help="Text file to write (one sentence per line, blank line between documents)"),
    sources: List[Path] = typer.Argument(..., help="Source files: .txt (doc per line), .csv, .jsonl, CoNLL .tsv (training splits only)"),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write per-source counts as JSON"),
    exclude: List[Path] = typer.Option([], "--exclude", help="Evaluation text (the HoC tree assets/hoc_raw or HoC .jsonl, CoNLL dev/test .tsv; repeatable) whose sentences are left out"),
):
    """Gather pretraining text from raw corpora into one file, without the sentences of the
    evaluation files given with --exclude."""
    from ..pretraining.leakage import evaluation_files_sentences, words_of
    from ..pretraining.text import collect_text

    with user_errors():
        excluded = {tuple(words_of(sentence)) for _, sentence in evaluation_files_sentences(exclude)}
    stats = collect_text(sources, output, exclude=excluded)
    rows = [(src, s["documents"], s["sentences"], s["words"]) for src, s in stats.to_dict()["sources"].items()]
    msg.table(rows, header=("source", "documents", "sentences", "words"), divider=True)
    msg.good(f"Wrote {stats.total('words'):,} words in {stats.total('sentences'):,} sentences to {output}"
             + (f" ({stats.total('excluded'):,} sentences of evaluation sets left out)" if exclude else ""))
    if stats_path:
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        stats_path.write_text(json.dumps(stats.to_dict(), indent=2), encoding="utf8")


SCHEME_HELP = "typed (B-Disease), untyped (B/I/O) or auto"
LABEL_HELP = "Entity label for untyped B/I/O tags"
RELABEL_HELP = "OLD=NEW entity label to rename (repeatable)"


@app.command("convert")
def convert_cli(
    input_path: Path = typer.Argument(..., help="CoNLL/BIO NER file (token TAB tag)"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write"),
    scheme: str = typer.Option("auto", "--scheme", help=SCHEME_HELP),
    label: str = typer.Option("ENTITY", "--label", help=LABEL_HELP),
    n_sents: int = typer.Option(1, "--n-sents", "-n", help="Sentences per Doc"),
    relabel: List[str] = typer.Option([], "--relabel", help=RELABEL_HELP),
):
    """Convert a CoNLL NER file to a spaCy DocBin."""
    from ..corpora.conll import convert_ner
    from ..corpora.splits import parse_label_map

    with user_errors():
        renames = parse_label_map(relabel)
    stats = convert_ner(input_path, output_path, scheme=scheme, label=label, n_sents=n_sents, relabel=renames)
    msg.good(f"{input_path} -> {output_path}: {json.dumps(stats)}")


@app.command("convert-cats")
def convert_cats_cli(
    input_path: Path = typer.Argument(..., help='JSON lines, a document each: {"text", "labels": [...]} or {"text", "cats": {label: 0/1}}'),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write, every Doc with a value for every label in doc.cats"),
    label: List[str] = typer.Option([], "--label", help="The corpus's labels (repeatable); default: every label the file uses"),
):
    """Convert a document-classification corpus of your own (multi-label) to a DocBin for
    configs/hoc.cfg or any textcat_multilabel config."""
    import spacy
    from spacy.tokens import DocBin

    from ..corpora.textcat import cats_jsonl_to_docs

    with user_errors():
        docs = list(cats_jsonl_to_docs(input_path, spacy.blank("en"), labels=label or None))
    output_path.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=docs).to_disk(output_path)
    msg.good(f"{input_path} -> {output_path}: {len(docs)} documents, labels {sorted(docs[0].cats) if docs else []}")


@app.command("fill-entities")
def fill_entities_cli(
    input_path: Path = typer.Argument(..., help="NER DocBin (e.g. corpus/ner/NCBI-disease/train.spacy)"),
    output_path: Path = typer.Argument(..., help="DocBin to write: the gold entities plus the teachers' of the other types"),
    teacher: List[Path] = typer.Option(..., "--teacher", help="A trained pipeline with a ner (e.g. training/ner_gene/model-best); repeatable, the first wins where two overlap"),
    own_type: List[str] = typer.Option([], "--type", help="An entity type the input's gold annotates (repeatable; none: the input has no NER annotation)"),
    stats: Optional[Path] = typer.Option(None, "--stats", help="JSON of the entities added and skipped, by type"),
    gpu_id: int = gpu_option(),
):
    """Add to each Doc the teachers' entities of the types its corpus does not annotate (never over
    a gold entity), so a multi-task ner learns every type from it (configs/release_multitask.cfg,
    entity_types of the filled corpus: its own and the teachers')."""
    from collections import Counter

    import spacy
    from spacy.tokens import DocBin

    from ..corpora.corpus_files import existing_corpus_file, read_docbin
    from ..loading import load_pipeline
    from ..training.teacher_entities import fill_entities

    with user_errors(ValueError, OSError):
        teachers = [load_pipeline(path, gpu_id) for path in teacher]
        nlp = spacy.blank("en")
        docs = read_docbin(existing_corpus_file(input_path, "fill-entities", "NER DocBin"), nlp.vocab)
        filled, totals = [], {"added": Counter(), "skipped": Counter()}
        for doc, counts in fill_entities(docs, own_type, teachers):
            filled.append(doc)
            for key, counter in counts.items():
                totals[key].update(counter)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    DocBin(docs=filled, store_user_data=True).to_disk(output_path)
    report = {"input": str(input_path), "output": str(output_path), "docs": len(filled), "own_types": sorted(own_type),
              "teachers": [str(path) for path in teacher], **{key: dict(sorted(c.items())) for key, c in totals.items()}}
    if stats:
        from ..run_record import write_json

        write_json(stats, report)
    msg.good(f"{input_path} -> {output_path}: {len(filled)} docs, teacher entities added {dict(totals['added'])}, "
             f"skipped over gold or earlier ones {dict(totals['skipped'])}")


@app.command("convert-splits")
def convert_splits_cli(
    input_dir: Path = typer.Argument(..., help="Directory with train.tsv, devel.tsv and test.tsv (CoNLL BIO)"),
    output_dir: Path = typer.Argument(..., help="Directory for train.spacy, devel.spacy and test.spacy"),
    scheme: str = typer.Option("auto", "--scheme", help=SCHEME_HELP),
    label: str = typer.Option("ENTITY", "--label", help=LABEL_HELP),
    relabel: List[str] = typer.Option([], "--relabel", help=RELABEL_HELP),
    corpus: Optional[str] = typer.Option(None, "--corpus", help="The corpus's entity-type table (spacy_biolm.corpora.entity_types, e.g. BioNLP13CG): labels become the release's types, missing or outside; a label not in it is an error; each Doc records the types the corpus annotates completely"),
    exclude_test: List[Path] = typer.Option([], "--exclude-test", help="A CoNLL test file (repeatable): train and devel sentences sharing 13 words with one of its sentences are dropped (test never is)"),
    split: List[str] = typer.Option([], "--split", help="A split to convert (repeatable; default: train, devel and test), for a corpus that ships fewer"),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write the per-split statistics as JSON (with the run's commit and date)"),
    limit: int = typer.Option(0, "--limit", help="Convert only the first N sentences of each split (0 = all; smoke runs)", min=0),
):
    """Convert the train/devel/test splits of one NER corpus to DocBins, its labels renamed or mapped
    to the release's entity types, without the sentences that share 13 words with a test set."""
    from ..corpora.splits import NER_SPLITS, convert_ner_splits, parse_label_map

    with user_errors():
        report = convert_ner_splits(input_dir, output_dir, scheme=scheme, label=label, relabel=parse_label_map(relabel),
                                    corpus=corpus, exclude_test=exclude_test, splits=split or NER_SPLITS, limit=limit)
    for stats in report.values():
        msg.good(f"{stats['input']} -> {stats['output']}: {json.dumps(stats)}")
    if stats_path:
        from ..run_record import write_json

        write_json(stats_path, {"corpus": corpus, "exclude_test": [str(path) for path in exclude_test], "splits": report})


@app.command("entity-types-report")
def entity_types_report_cli(
    stats: List[Path] = typer.Argument(..., help="Statistics of `convert-splits --corpus NAME --stats`, one file per corpus"),
    output: Path = typer.Option(..., "--output", help="The report to write (JSON, with the run's commit and date)"),
    table: Optional[Path] = typer.Option(None, "--table", help="Also write its Markdown tables here"),
):
    """What the entity-type table did to the converted corpora: per corpus the types it annotates
    completely, each label's fate and mentions, sentences kept and dropped for sharing 13 words
    with a test set."""
    from ..corpora.entity_types import conversion_report, report_markdown
    from ..run_record import with_run_comment, write_json

    with user_errors():
        records = [json.loads(path.read_text(encoding="utf8")) for path in stats]
        untyped = [str(path) for path, record in zip(stats, records) if not record.get("corpus")]
        if untyped:
            raise ValueError(f"{', '.join(untyped)}: not converted with --corpus")
        tests = sorted({test for record in records for test in record["exclude_test"]})
        report = conversion_report({record["corpus"]: record["splits"] for record in records}, exclude_test=tests)
    written = write_json(output, report)
    if table:
        table.parent.mkdir(parents=True, exist_ok=True)
        table.write_text(with_run_comment(report_markdown(report), written["run"]), encoding="utf8")
    msg.good(f"{output}: {len(report['corpora'])} corpora" + (f", tables in {table}" if table else ""))


HOC_SPLIT_HELP = "PMID split file (JSON: train, dev, test lists)"


HOC_INPUT_HELP = "The HoC corpus: its upstream tree (assets/hoc_raw: text/ and labels/) or JSON lines (hoc.jsonl)"


@app.command("hoc-split")
def hoc_split_cli(
    input_path: Path = typer.Argument(..., help=HOC_INPUT_HELP),
    output: Path = typer.Argument(Path("configs/splits/hoc_split.json"), help=HOC_SPLIT_HELP + " to write"),
    seed: int = typer.Option(0, "--seed", help="Seed of the shuffle"),
):
    """Draw the fixed 70/10/20 train/dev/test split of the Hallmarks of Cancer corpus by PMID."""
    from ..corpora.hoc import make_split, read_hoc, write_split

    with user_errors():
        split = make_split([a.pmid for a in read_hoc(input_path)], seed=seed)
        write_split(output, split, seed=seed, source=input_path.name)
    msg.good(f"{output}: " + ", ".join(f"{len(v)} {k}" for k, v in split.items()))


@app.command("convert-hoc")
def convert_hoc_cli(
    input_path: Path = typer.Argument(..., help=HOC_INPUT_HELP),
    output_dir: Path = typer.Argument(..., help="Directory for train.spacy, dev.spacy and test.spacy"),
    split: Path = typer.Option(Path("configs/splits/hoc_split.json"), "--split", help=HOC_SPLIT_HELP),
    stats_path: Optional[Path] = typer.Option(None, "--stats", help="Write the per-split counts as JSON"),
    limit: int = typer.Option(0, "--limit", help="Convert only the first N abstracts of each split (0 = all; smoke runs)", min=0),
):
    """Convert the Hallmarks of Cancer corpus to DocBins: the 10 hallmarks in doc.cats, sentence labels in doc.spans["hoc_sentences"]."""
    from ..corpora.hoc import convert_hoc

    with user_errors():
        report = convert_hoc(input_path, split, output_dir, limit=limit)
    for name, stats in report.items():
        msg.good(f"{name}: {stats['documents']} documents ({stats['without_hallmark']} without a hallmark) -> {stats['output']}")
    if stats_path:
        stats_path.parent.mkdir(parents=True, exist_ok=True)
        stats_path.write_text(json.dumps(report, indent=2), encoding="utf8")
