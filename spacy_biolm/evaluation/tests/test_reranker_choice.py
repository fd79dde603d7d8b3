"""The answer reranker that ships: the trained one only when it beats its untrained start on dev."""

from pathlib import Path

import numpy
import pytest

from spacy_biolm.corpora.qa import convert_qa
from spacy_biolm.evaluation.reranker_choice import choose_reranker, paired_bootstrap

CONFIG = Path(__file__).parents[3] / "configs" / "answer_reranker.cfg"


def test_paired_bootstrap_gain_interval_and_p_value():
    better = paired_bootstrap([0.5, 1.0, 0.5, 1.0], [0.25, 0.5, 0.25, 0.5])
    assert better["difference"] == pytest.approx(0.375) and better["p_not_better"] == 0.0
    assert 0.25 <= better["ci90_low"] <= better["ci90_high"] <= 0.5 and better["items"] == 4
    same = paired_bootstrap([0.5, 1.0], [0.5, 1.0])
    assert same["difference"] == 0.0 and same["p_not_better"] == 1.0
    mixed = paired_bootstrap([1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0])
    assert 0.0 < mixed["p_not_better"] < 1.0 and mixed == paired_bootstrap([1.0, 0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="equally long"):
        paired_bootstrap([1.0, 0.5], [1.0])


@pytest.fixture
def reranker_dirs(tmp_path, tiny_qa_encoder):
    """A reranker pipeline of configs/answer_reranker.cfg (the tiny encoder, initialized, no update)
    saved as if trained, and a dev DocBin of 6 questions where no candidate shares a term with its
    question (BM25 is 0 for all: only the model's margins rank)."""
    import spacy
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config

    rows = []
    for i, drug in enumerate(("colchicine", "imatinib", "metformin", "tamoxifen", "aspirin", "insulin")):
        question = f"Which treatment for condition {i}?"
        rows += [f"1\t{question}\t{drug} works .", f"0\t{question}\tThe cell divides .", f"0\t{question}\tA protein binds ."]
    (tmp_path / "dev.tsv").write_text("label\tquestion\tanswer_candidate\n" + "\n".join(rows) + "\n", encoding="utf8")
    convert_qa("reranking", tmp_path / "dev.tsv", tmp_path / "dev.spacy", spacy.blank("en"))
    config = load_config(CONFIG, overrides={"paths.encoder": str(tiny_qa_encoder), "paths.train": str(tmp_path / "dev.spacy"),
                                            "paths.dev": str(tmp_path / "dev.spacy")}, interpolate=False)
    init_nlp(config).to_disk(tmp_path / "trained")
    return tmp_path


def test_training_that_does_not_beat_its_start_ships_the_start(reranker_dirs):
    import spacy

    record = choose_reranker(reranker_dirs / "trained", reranker_dirs / "dev.spacy", reranker_dirs / "chosen", resamples=200)
    # Not one update: the trained pipeline is its start, question for question.
    assert record["trained_minus_start"]["difference"] == 0.0 and record["trained_minus_start"]["p_not_better"] == 1.0
    assert record["chosen"] == "untrained start" and record["questions"] == 6
    assert record["rankers"]["trained"]["dev_mrr"] == record["rankers"]["untrained start"]["dev_mrr"]
    chosen = spacy.load(reranker_dirs / "chosen")
    assert chosen.meta["spacy_biolm"]["reranker_choice"]["chosen"] == "untrained start"
    assert chosen.config["components"]["answer_reranker"]["lexical_weight"] == record["lexical_weight"]
    with pytest.raises(FileExistsError, match="not a saved spaCy pipeline"):
        (reranker_dirs / "notes").mkdir()
        choose_reranker(reranker_dirs / "trained", reranker_dirs / "dev.spacy", reranker_dirs / "notes")


def test_a_reranker_better_on_every_dev_question_ships(reranker_dirs, monkeypatch):
    import spacy

    from spacy_biolm.evaluation import reranker_choice

    def ranking(nlp, relevant_margin):
        # The relevant candidate is the drug sentence: this ranker puts it first (+1) or last (-1).
        reranker = nlp.get_pipe("answer_reranker")
        predict = reranker.predict

        def predict_with_margins(docs):
            owners, _ = predict(docs)
            return owners, numpy.asarray([0.0 if sent.text.split()[0] in ("The", "A") else relevant_margin for _, sent in owners])

        reranker.predict = predict_with_margins
        return nlp

    load = reranker_choice.load_pipeline
    start = reranker_choice.untrained_start
    monkeypatch.setattr(reranker_choice, "load_pipeline", lambda path, gpu_id=-1: ranking(load(path, gpu_id=gpu_id), 1.0))
    monkeypatch.setattr(reranker_choice, "untrained_start", lambda path: ranking(start(path), -1.0))
    record = choose_reranker(reranker_dirs / "trained", reranker_dirs / "dev.spacy", reranker_dirs / "chosen", resamples=200)
    assert record["chosen"] == "trained" and record["trained_minus_start"]["p_not_better"] == 0.0
    assert record["rankers"]["trained"]["dev_mrr"]["0.0"] == 1.0
    assert record["rankers"]["untrained start"]["dev_mrr"]["0.0"] == pytest.approx(1 / 3)
    assert spacy.load(reranker_dirs / "chosen").meta["spacy_biolm"]["reranker_choice"]["chosen"] == "trained"
