"""``spacy-biolm qa``: question-answering corpora to DocBins, and the evaluation of QA pipelines."""

import json
from pathlib import Path
from typing import List, Optional

import typer
from wasabi import msg

from ._common import gpu_option, sub_app, user_errors

__all__ = ["app"]

app = sub_app("Question answering: convert BioASQ yes/no, factoid and reranking corpora; evaluate QA pipelines.")


def _blank_bio_nlp():
    """The tokenizer the QA corpora are converted with (the pipelines' own)."""
    import spacy

    return spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy-biolm.BioTokenizer.v1"}}})


@app.command("convert")
def convert_cli(
    fmt: str = typer.Argument(..., help="Input format: yesno (BioASQ yes/no TSV), squad (SQuAD/BioASQ/COVID-QA JSON), reranking (answer-candidate TSV), snippets (SQuAD/BioASQ JSON read as reranking Docs), boolq (BoolQ JSON lines), squad-reranking (SQuAD/COVID-QA paragraphs read as reranking Docs)"),
    input_path: Path = typer.Argument(..., help="Corpus file"),
    output_path: Path = typer.Argument(..., help="DocBin (.spacy) to write"),
    golden: Optional[Path] = typer.Option(None, "--golden", help="BioASQ golden file: gold answers for a test JSON without answers (squad)"),
    exclude: List[Path] = typer.Option([], "--exclude", help="QA file(s) of any format whose questions must be left out (e.g. the test set)"),
    dev_output: Optional[Path] = typer.Option(None, "--dev-output", help="Also write a development DocBin of held-out questions"),
    dev_fraction: float = typer.Option(0.1, "--dev-fraction", help="Share of questions held out for --dev-output"),
    sents_per_doc: int = typer.Option(0, "--sents-per-doc", help="reranking: candidates per Doc (0: all of a question's)"),
    seed: int = typer.Option(0, "--seed"),
    limit: int = typer.Option(0, "--limit", help="Keep the first N questions only (0: all)"),
    exclude_ngram: Optional[int] = typer.Option(None, "--exclude-ngram", help="Also drop examples sharing this many consecutive words with any text of the --exclude files (0: off; default 13 for boolq and squad-reranking, 0 otherwise)"),
    negatives: int = typer.Option(2, "--negatives", help="squad-reranking: on-topic sentences of other paragraphs of the same article added to each question"),
    max_candidates: int = typer.Option(0, "--max-candidates", help="squad-reranking: at most this many sentences of a question's own paragraph, the relevant and most on-topic ones (0: all; COVID-QA articles have ~170-280)"),
    max_passage_words: int = typer.Option(0, "--max-passage-words", help="squad: a longer context becomes the whole sentences around its answers, at most this many words, placed at random (training sets; 0: whole contexts)"),
):
    """Convert one question-answering corpus file to a spaCy DocBin (Docs carry doc._.question)."""
    from ..corpora.qa import convert_qa

    stats = convert_qa(
        fmt, input_path, output_path, _blank_bio_nlp(), golden=golden, exclude=exclude, dev_output=dev_output,
        dev_fraction=dev_fraction, sents_per_doc=sents_per_doc, seed=seed, limit=limit,
        exclude_ngram=exclude_ngram, negatives=negatives, max_candidates=max_candidates, max_passage_words=max_passage_words,
    )
    msg.good(f"{input_path} -> {output_path}: {json.dumps(stats)}")


@app.command("corpora")
def corpora_cli(
    assets: Path = typer.Argument(..., help="Corpus folder laid out as ../shared/data (the project's assets/)"),
    output_dir: Path = typer.Argument(..., help="Folder for yesno/, factoid/, reranking/ DocBins"),
    limit: int = typer.Option(0, "--limit", help="Keep the first N questions of each file only (0: all)"),
):
    """Convert all QA corpora of the project in one go: train/dev/test DocBins, test questions
    removed from the training sets (see `qa convert` for single files)."""
    from ..corpora.qa import convert_qa_corpora

    report = convert_qa_corpora(assets, output_dir, _blank_bio_nlp(), limit=limit)
    header = ("set", *next(iter(report.values())).keys())
    msg.table([(name, *stats.values()) for name, stats in report.items()], header=header, divider=True)


@app.command("evaluate")
def evaluate_cli(
    model: str = typer.Argument(..., help="Pipeline directory or package name"),
    data_paths: List[Path] = typer.Argument(..., help="QA DocBin(s) from `qa convert` / `qa corpora`"),
    outputs: List[Path] = typer.Option([], "--output", "-o", help="Metrics JSON to write, one per DocBin"),
    batch_size: int = typer.Option(16, "--batch-size", "-b"),
    threads: int = typer.Option(0, "--threads", help="torch CPU threads (0: torch's default)"),
    limit: int = typer.Option(0, "--limit", help="Score only the first N Docs (0: all)"),
    reranking_baselines: Optional[Path] = typer.Option(None, "--reranking-baselines", help="Reranking DocBins: also score BM25, the zero-shot cosine of this encoder and the two fused at the pipeline's lexical_weight on the same Docs"),
    answer_span_baselines: bool = typer.Option(False, "--answer-span-baselines", help="Answer-span DocBins: also score the most frequent snippet word and the sentence sharing most words with the question"),
    yes_no_majority: Optional[Path] = typer.Option(None, "--yes-no-majority", help="Yes/no DocBins: also score the more frequent answer of this training DocBin"),
    gpu_id: int = gpu_option(),
):
    """Score a QA pipeline (`spacy evaluate` would drop the questions) and time it: questions/s."""
    from ..evaluation.qa import ANSWER_SPAN_BASELINES, evaluate_qa_files, majority_baseline

    if outputs and len(outputs) != len(data_paths):
        raise typer.BadParameter(f"give one --output per DocBin ({len(data_paths)}), got {len(outputs)}")
    baselines = list(ANSWER_SPAN_BASELINES) if answer_span_baselines else []
    if yes_no_majority:
        baselines.append(majority_baseline(yes_no_majority))
    results = evaluate_qa_files(model, data_paths, outputs, gpu_id=gpu_id, threads=threads, batch_size=batch_size,
                                limit=limit, baselines=baselines, reranking_encoder=reranking_baselines)
    for data_path, scores in results.items():
        msg.divider(data_path)
        msg.table([(k, f"{v:.4f}" if isinstance(v, float) else v) for k, v in scores.items() if k != "baselines"], divider=True)
        for name, values in scores.get("baselines", {}).items():
            msg.info(f"baseline {name}: " + ", ".join(f"{k} {v:.4f}" for k, v in values.items() if isinstance(v, float)))


@app.command("evaluate-project")
def evaluate_project_cli(
    training_dir: Path = typer.Argument(Path("training"), help="Folder with yes_no/, answer_span/, answer_reranker/ (model-best inside)"),
    corpus_dir: Path = typer.Argument(Path("corpus/qa"), help="Folder written by `qa corpora`"),
    metrics_dir: Path = typer.Argument(Path("metrics"), help="Where the metrics JSON files and qa_results.md go"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
    name: str = typer.Option("spacy-biolm", "--name", help="Name of our model in the tables"),
    gpu_id: int = gpu_option(),
    encoder: Optional[Path] = typer.Option(None, "--encoder", help="HF encoder directory the pipelines were fine-tuned from: its zero-shot cosine ranking is the reranking baseline"),
):
    """Evaluate the project's three QA pipelines on their test sets in one go, each beside its
    baselines on the same Docs, and write the tables."""
    from ..evaluation.qa import evaluate_qa_project

    print(evaluate_qa_project(training_dir, corpus_dir, metrics_dir, paper_results=paper, name=name, gpu_id=gpu_id,
                              encoder=encoder))


@app.command("seeds-table")
def seeds_table_cli(
    output: Path = typer.Argument(..., help="Markdown table to write (its .json goes beside it)"),
    task: str = typer.Argument(..., help="yes_no, answer_span, answer_span_bioasq7b, answer_span_covid_qa or answer_reranker"),
    rows: List[str] = typer.Argument(..., help="ROW=GLOB pairs: a row's per-seed test JSONs (`qa evaluate --output`), e.g. '3 epochs=metrics/yes_no_seed*_test.json'"),
    paper: Optional[Path] = typer.Option(None, "--paper", help="paper_results.json to set beside ours"),
):
    """One QA task's test scores over seeds, from evaluation files already written (one per seed):
    mean (std) per row, beside the baselines scored on the same test set and the papers' rows."""
    from glob import glob

    from ..evaluation.qa import write_qa_seeds_table
    from ..evaluation.tables import parse_named_paths

    with user_errors():
        named = {row: [Path(p) for p in sorted(glob(str(pattern)))] for row, pattern in parse_named_paths(rows).items()}
        print(write_qa_seeds_table(output, task, named, paper))


@app.command("answer-lengths")
def answer_lengths_cli(
    output: Path = typer.Argument(..., help="JSON to write"),
    corpora: List[str] = typer.Argument(..., help="NAME=DOCBIN pairs: answer-span DocBins (from `qa convert squad`)"),
    encoder: Path = typer.Option(..., "--encoder", help="The answer_span encoder whose wordpieces are counted (an HF directory)"),
):
    """Gold answer lengths of answer-span corpora, in words and wordpieces, and the share longer
    than the longest answer `answer_span` decodes: entity answers (BioASQ) or clauses (COVID-QA)."""
    from ..evaluation.qa import answer_lengths
    from ..evaluation.tables import parse_named_paths
    from ..run_record import write_json

    with user_errors(ValueError, OSError):
        result = answer_lengths(parse_named_paths(corpora), encoder)
    write_json(output, {"encoder": str(encoder), "sets": result})
    for name, stats in result.items():
        msg.info(f"{name}: {stats}")
    msg.good(f"Wrote {output}")


@app.command("choose-reranker")
def choose_reranker_cli(
    trained_dir: Path = typer.Argument(..., help="The trained reranker pipeline (training/answer_reranker/model-best)", exists=True),
    dev_path: Path = typer.Argument(..., help="Reranking dev DocBin the two rankers are compared on", exists=True),
    output_dir: Path = typer.Argument(..., help="Where the pipeline that ships is saved (a saved pipeline there is replaced)"),
    output: Optional[Path] = typer.Option(None, "--output", help="Also write the choice, both dev curves and the bootstrap here (JSON)"),
    alpha: float = typer.Option(0.05, "--alpha", help="The trained one ships when the one-sided p-value of its dev gain is below this"),
    gpu_id: int = gpu_option(),
):
    """Ship the trained answer reranker only when it beats the ranker it started from (its config
    initialized without an update) on dev, question by question (paired bootstrap); each with
    its own lexical_weight chosen on dev."""
    from ..evaluation.reranker_choice import choose_reranker

    with user_errors(ValueError, FileExistsError, FileNotFoundError):
        record = choose_reranker(trained_dir, dev_path, output_dir, alpha=alpha, gpu_id=gpu_id)
    gain = record["trained_minus_start"]
    msg.good(f"{output_dir}: the {record['chosen']} reranker, lexical_weight {record['lexical_weight']} "
             f"(trained - start on {record['questions']} dev questions: MRR {gain['difference']:+.3f}, "
             f"90% interval {gain['ci90_low']:+.3f} to {gain['ci90_high']:+.3f}, p {gain['p_not_better']:.3f})")
    if output:
        from ..run_record import write_json

        write_json(output, record)


@app.command("tune-lexical-weight")
def tune_lexical_weight_cli(
    model_dir: Path = typer.Argument(..., help="Trained pipeline with an answer_reranker (e.g. training/answer_reranker/model-best); updated in place"),
    dev_path: Path = typer.Argument(..., help="Reranking dev DocBin (corpus/qa/reranking/dev.spacy)"),
    output: Optional[Path] = typer.Option(None, "--output", help="Also write the dev MRR of every weight here (JSON)"),
    gpu_id: int = gpu_option(),
):
    """Choose the reranker's lexical_weight (BM25 of the question's terms beside the model's
    margins, both standardised per question) on dev, and store it in the pipeline's config."""
    from ..evaluation.qa import tune_lexical_weight

    result = tune_lexical_weight(model_dir, dev_path, gpu_id=gpu_id)
    curve = ", ".join(f"{w}: {v:.3f}" for w, v in result["dev_mrr"].items())
    msg.good(f"{model_dir}: lexical_weight {result['lexical_weight']} (dev MRR over {result['questions']} questions: {curve})")
    if output:
        from ..run_record import write_json

        write_json(output, result)
