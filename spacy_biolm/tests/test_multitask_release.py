"""configs/release_multitask.cfg: one transformer, every default-on component listening, trained by
plain `spacy train` from corpora that each annotate one task; a Doc gives no loss to the tasks its
corpus does not annotate."""

import json
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.tokens import DocBin, Span
from spacy.training import Corpus
from spacy.util import load_config

from spacy_biolm.doc_data import get_relations, set_relations
from spacy_biolm.doc_data.relations import Relation

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "release_multitask.cfg"
LISTENERS = ("ner", "ner_gene", "relation_extractor", "hallmarks")
HALLMARKS = ("Resisting cell death", "Sustaining proliferative signaling")


def _task_docbins(out: Path) -> dict:
    """One small DocBin per task, in the forms the project's converters write."""
    nlp = spacy.blank("en")
    diseases, genes, relations, hoc = [], [], [], []
    for i in range(3):
        doc = nlp.make_doc(f"Patients {i} with ataxia telangiectasia were seen .")
        doc.ents = [Span(doc, 3, 5, label="DISEASE")]
        diseases.append(doc)
        doc = nlp.make_doc(f"The BRCA1 protein binds {i} RAD51 .")
        doc.ents = [Span(doc, 1, 2, label="GENE"), Span(doc, 5, 6, label="GENE")]
        genes.append(doc)
        doc = nlp.make_doc(f"@GENE$ variants {i} cause @DISEASE$ .")
        head, tail = Span(doc, 0, 1, label="GENE"), Span(doc, 4, 5, label="DISEASE")
        doc.ents = [head, tail]
        set_relations(doc, [Relation(head, tail, "ASSOCIATION")] if i % 2 else [])
        relations.append(doc)
        doc = nlp.make_doc(f"Tumour cells {i} evade apoptosis and grow . They divide .")
        doc.cats = {label: float(j == i % 2) for j, label in enumerate(HALLMARKS)}
        hoc.append(doc)
    paths = {}
    for name, docs in [("ner", diseases), ("ner_gene", genes), ("relations", relations), ("hoc", hoc)]:
        for split in ("train", "dev"):
            path = out / f"{name}_{split}.spacy"
            DocBin(docs=docs, store_user_data=True).to_disk(path)
            paths[f"paths.{name}_{split}"] = str(path)
    return paths


@pytest.fixture(scope="module")
def overrides(tmp_path_factory):
    from spacy_biolm.testing import make_tiny_encoder

    out = tmp_path_factory.mktemp("multitask")
    paths = _task_docbins(out)
    words = ["Patients with ataxia telangiectasia were seen .", "The BRCA1 protein binds RAD51 .",
             "@GENE$ variants cause @DISEASE$ .", "Tumour cells evade apoptosis and grow . They divide ."]
    encoder = make_tiny_encoder(out / "encoder", vocab_sentences=words * 20, vocab_size=120, layers=1)
    return {**paths, "paths.encoder": str(encoder), "training.max_steps": 2, "training.eval_frequency": 1}


@pytest.fixture(scope="module")
def trained(overrides, tmp_path_factory):
    from spacy.cli.train import train

    out = tmp_path_factory.mktemp("multitask_out")
    train(CONFIG, out, overrides=overrides)
    return out / "model-last"


def test_spacy_train_trains_one_transformer_that_every_component_listens_to(trained):
    nlp = spacy.load(trained)
    assert nlp.pipe_names == load_config(CONFIG, interpolate=False)["nlp"]["pipeline"]
    assert [name for name, _ in nlp.pipeline if name == "transformer"] == ["transformer"]
    listeners = nlp.get_pipe("transformer").listener_map
    assert sorted(listeners) == sorted(LISTENERS)  # no component has a copy of the encoder
    assert nlp.get_pipe("ner").labels == ("DISEASE",) and nlp.get_pipe("ner_gene").labels == ("GENE",)


def test_the_multitask_pipeline_round_trips(trained, tmp_path):
    nlp = spacy.load(trained)
    text = "The BRCA1 protein binds RAD51 in ataxia telangiectasia . Tumour cells evade apoptosis ."
    before = nlp(text)
    nlp.to_disk(tmp_path / "copy")
    after = spacy.load(tmp_path / "copy")(text)
    assert [(e.start, e.end, e.label_) for e in after.ents] == [(e.start, e.end, e.label_) for e in before.ents]
    assert after.cats == pytest.approx(before.cats)
    assert sorted(after.cats) == sorted(HALLMARKS)
    key = lambda doc: [(r.key, r.label, round(r.score, 5)) for r in get_relations(doc)]
    assert key(after) == key(before)


def _gradient_norms(nlp, examples) -> tuple:
    """(losses, sum of |gradient| per component head) after one update that applies nothing."""
    losses = {}
    nlp.update(examples, sgd=False, losses=losses)
    norms = {}
    for name in LISTENERS:
        model = nlp.get_pipe(name).model
        total = 0.0
        for node in model.walk():
            if node.name.startswith("transformer-listener"):
                continue
            for param in node.param_names:
                if node.has_grad(param):
                    total += float(numpy.abs(node.ops.to_numpy(node.get_grad(param))).sum())
                    node.set_grad(param, node.ops.alloc(node.get_grad(param).shape))  # reset for the next call
        norms[name] = total
    return losses, norms


@pytest.fixture(scope="module")
def initialized(overrides):
    from spacy.training.initialize import init_nlp
    from spacy.util import registry

    config = load_config(CONFIG, overrides=overrides, interpolate=True)
    nlp = init_nlp(config)
    corpora = registry.resolve(config["corpora"])
    by_task = {}
    for eg in corpora["train"](nlp):
        by_task.setdefault(next(name for name, path in overrides.items() if name.endswith("_train") and
                                eg.reference.text in {d.text for d in DocBin().from_disk(path).get_docs(nlp.vocab)}),
                           []).append(eg)
    return nlp, by_task


def test_missing_annotations_give_no_loss_and_no_gradient(initialized):
    nlp, by_task = initialized
    losses, norms = _gradient_norms(nlp, by_task["paths.hoc_train"])
    assert losses["ner"] == 0.0 and losses["ner_gene"] == 0.0 and losses["relation_extractor"] == 0.0
    assert norms["ner"] == 0.0 and norms["ner_gene"] == 0.0 and norms["relation_extractor"] == 0.0
    assert losses["hallmarks"] > 0.0 and norms["hallmarks"] > 0.0
    # Each NER corpus teaches its own typed_ner only: NCBI-disease's O tokens say nothing about genes.
    losses, norms = _gradient_norms(nlp, by_task["paths.ner_train"])
    assert losses["ner"] > 0.0 and norms["ner"] > 0.0 and losses["ner_gene"] == 0.0 and norms["ner_gene"] == 0.0
    assert losses["hallmarks"] == 0.0 and norms["hallmarks"] == 0.0 and norms["relation_extractor"] == 0.0
    losses, norms = _gradient_norms(nlp, by_task["paths.ner_gene_train"])
    assert losses["ner_gene"] > 0.0 and norms["ner_gene"] > 0.0 and losses["ner"] == 0.0 and norms["ner"] == 0.0
    losses, norms = _gradient_norms(nlp, by_task["paths.relations_train"])
    assert losses["relation_extractor"] > 0.0 and norms["relation_extractor"] > 0.0
    assert losses["ner"] == 0.0 and norms["ner"] == 0.0 and norms["hallmarks"] == 0.0


def test_the_same_docs_read_without_the_missing_marks_do_give_loss(initialized, overrides):
    # The contrast that makes the test above able to fail: HoC abstracts read as a plain spaCy
    # corpus claim "no entity anywhere", and the ner learns from that.
    nlp, _ = initialized
    examples = list(Corpus(overrides["paths.hoc_train"])(nlp))
    for eg in examples:
        eg.reference.ents = []
    losses, norms = _gradient_norms(nlp, examples)
    assert losses["ner"] > 0.0 and norms["ner"] > 0.0


def test_relations_marked_missing_give_no_pairs_even_where_entities_are_predicted(initialized):
    # With an annotating ner, other tasks' Docs would reach the relation extractor with entities:
    # marked missing, their pairs are not negatives.
    from spacy_biolm.doc_data import RELATIONS_USER_DATA_KEY

    nlp, by_task = initialized
    examples = by_task["paths.hoc_train"]
    for eg in examples:
        eg.predicted.ents = [Span(eg.predicted, 0, 1, label="GENE"), Span(eg.predicted, 1, 2, label="DISEASE")]
    losses, norms = _gradient_norms(nlp, examples)
    assert losses["relation_extractor"] == 0.0 and norms["relation_extractor"] == 0.0
    for eg in examples:
        del eg.reference.user_data[RELATIONS_USER_DATA_KEY]  # annotated, no relation: every pair negative
    losses, norms = _gradient_norms(nlp, examples)
    assert losses["relation_extractor"] > 0.0 and norms["relation_extractor"] > 0.0


def _scored_example(text, gold, predicted, types=None):
    from spacy.training import Example

    from spacy_biolm.doc_data import set_annotated_entity_types

    nlp = spacy.blank("en")
    reference, prediction = nlp.make_doc(text), nlp.make_doc(text)
    reference.ents = [Span(reference, s, e, label=label) for s, e, label in gold]
    prediction.ents = [Span(prediction, s, e, label=label) for s, e, label in predicted]
    if types:
        set_annotated_entity_types(reference, types)
    return Example(prediction, reference)


def test_entities_are_scored_on_the_types_each_doc_annotates():
    from spacy_biolm.pipes.entity_scorer import score_annotated_entities

    text = "BRCA1 carriers develop breast cancer ."
    found_both = [(0, 1, "GENE"), (3, 5, "DISEASE")]
    disease_only = _scored_example(text, [(3, 5, "DISEASE")], found_both, types=["DISEASE"])
    scores = score_annotated_entities([disease_only])
    assert scores["ents_f"] == 1.0 and set(scores["ents_per_type"]) == {"DISEASE"}
    unrecorded = _scored_example(text, [(3, 5, "DISEASE")], found_both)  # every type annotated: GENE is wrong
    scores = score_annotated_entities([unrecorded])
    assert scores["ents_p"] == 0.5 and scores["ents_per_type"]["GENE"]["p"] == 0.0
    missed = _scored_example(text, [(0, 1, "GENE"), (3, 5, "DISEASE")], [(3, 5, "DISEASE")], types=["DISEASE", "GENE"])
    assert score_annotated_entities([missed])["ents_r"] == 0.5


def test_entities_left_out_of_doc_ents_by_an_overlap_are_scored_from_the_span_group():
    from spacy_biolm.doc_data import ENTITIES_SPANS_KEY
    from spacy_biolm.pipes.entity_scorer import score_annotated_entities

    text = "ataxia telangiectasia mutated carriers ."
    gene_over_disease = _scored_example(text, [(0, 3, "GENE")], [(0, 2, "DISEASE")], types=["GENE"])
    assert score_annotated_entities([gene_over_disease])["ents_r"] == 0.0  # doc.ents holds the disease only
    found = gene_over_disease.predicted
    found.spans[ENTITIES_SPANS_KEY] = [Span(found, 0, 2, label="DISEASE"), Span(found, 0, 3, label="GENE")]
    assert score_annotated_entities([gene_over_disease])["ents_f"] == 1.0
    assert score_annotated_entities([gene_over_disease], spans_key=None)["ents_r"] == 0.0


def test_relation_and_hallmark_scores_skip_docs_not_annotated_for_them():
    from spacy.training import Example

    from spacy_biolm.doc_data import mark_relations_missing
    from spacy_biolm.pipes.multilabel_thresholds import score_multilabel
    from spacy_biolm.pipes.relation_extractor.scorer import score_relations

    nlp = spacy.blank("en")
    predicted = nlp.make_doc("BRCA1 variants cause breast cancer .")
    head, tail = Span(predicted, 0, 1, label="GENE"), Span(predicted, 3, 5, label="DISEASE")
    set_relations(predicted, [Relation(head, tail, "ASSOCIATION", 0.9)])
    predicted.cats = {label: 0.9 for label in HALLMARKS}
    reference = nlp.make_doc(predicted.text)
    assert score_relations([Example(predicted, reference)])["rel_micro_p"] == 0.0  # annotated: a false positive
    mark_relations_missing(reference)
    reference.cats = {}
    other_task = Example(predicted, reference)
    gold = nlp.make_doc(predicted.text)
    gold.cats = {HALLMARKS[0]: 1.0, HALLMARKS[1]: 0.0}
    set_relations(gold, [Relation(Span(gold, 0, 1, "GENE"), Span(gold, 3, 5, "DISEASE"), "ASSOCIATION")])
    own_task = Example(predicted, gold)
    assert score_relations([other_task, own_task])["rel_micro_p"] == 1.0
    assert score_multilabel([other_task, own_task], labels=HALLMARKS)["cats_micro_p"] == 0.5


def test_entity_types_scores_the_multitask_ner_on_the_types_a_test_set_annotates(trained, overrides, tmp_path):
    import json

    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    output = tmp_path / "ner_test.json"
    result = CliRunner().invoke(app, ["evaluate", "entity-types", str(trained), overrides["paths.ner_dev"],
                                      "--type", "DISEASE", "--output", str(output)])
    assert result.exit_code == 0, result.output
    scores = json.loads(output.read_text())
    assert scores["types"] == ["DISEASE"] and scores["docs"] == 3 and "run" in scores
    assert set(scores["ents_per_type"] or {}) <= {"DISEASE"}  # genes it finds there are not counted


def test_evaluate_multitask_writes_a_test_score_per_release_row(trained, overrides, tmp_path):
    import json
    import shutil

    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    model = tmp_path / "model"
    shutil.copytree(trained, model)  # its hallmarks thresholds are tuned in place
    result = CliRunner().invoke(app, [
        "evaluate", "multitask", str(model), str(tmp_path / "metrics"),
        "--entities", f"ner=DISEASE={overrides['paths.ner_dev']}", "--entities", f"ner_gene=GENE={overrides['paths.ner_gene_dev']}",
        "--relations", overrides["paths.relations_dev"], "--hoc-dev", overrides["paths.hoc_dev"], "--hoc-test", overrides["paths.hoc_dev"]])
    assert result.exit_code == 0, result.output
    written = {path.name: json.loads(path.read_text()) for path in (tmp_path / "metrics").glob("*.json")}
    assert sorted(written) == ["hallmarks_test.json", "ner_gene_test.json", "ner_test.json", "relation_extractor_test.json"]
    assert written["ner_gene_test.json"]["types"] == ["GENE"]
    # doc.spans["entities"] holds every GENE of doc.ents and those an earlier DISEASE overlaps: recall ≥ doc.ents's.
    gene = written["ner_gene_test.json"]
    assert gene["ents_r"] >= gene["doc_ents"]["ents_r"] and set(gene["doc_ents"]) == {"ents_p", "ents_r", "ents_f"}
    assert {"rel_micro_f", "baselines"} <= set(written["relation_extractor_test.json"])
    assert {"cats_micro_f", "cats_macro_f"} <= set(written["hallmarks_test.json"])
    assert "thresholds" in spacy.util.load_config(model / "config.cfg")["components"]["hallmarks"]["scorer"]
    bad = CliRunner().invoke(app, ["evaluate", "multitask", str(model), str(tmp_path / "m2"), "--entities", "ner=DISEASE",
                                   "--relations", "x", "--hoc-dev", "x", "--hoc-test", "x"])
    assert bad.exit_code != 0 and "ROW=TYPE" in bad.output


def test_a_row_of_several_test_sets_is_their_macro_average_and_entity_rows_need_no_other_task(trained, overrides, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.evaluation.multitask import evaluate_multitask

    ner_dev, gene_dev = Path(overrides["paths.ner_dev"]), Path(overrides["paths.ner_gene_dev"])
    # DISEASE on two test sets: NCBI-style (diseases annotated) and one whose DISEASE mentions are none of its entities.
    nlp = spacy.blank("en")
    docs = [nlp.make_doc(f"Patients {i} with ataxia telangiectasia were seen .") for i in range(3)]
    unannotated = tmp_path / "no_diseases.spacy"
    DocBin(docs=docs).to_disk(unannotated)
    # ner_dev is annotated once for two rows: first scored for GENE, then for DISEASE.
    written = evaluate_multitask(trained, tmp_path / "one", {"genes_there": (["GENE"], [ner_dev]), "ner": (["DISEASE"], [ner_dev]),
                                                             "other": (["DISEASE"], [unannotated])})
    assert sorted(written) == ["genes_there", "ner", "other"]  # no relation, no hallmarks row without their test sets
    one, other, genes = (json.loads(written[row].read_text()) for row in ("ner", "other", "genes_there"))
    assert genes["types"] == ["GENE"] and one["types"] == ["DISEASE"]
    written = evaluate_multitask(trained, tmp_path / "macro", {"ner": (["DISEASE"], [ner_dev, unannotated])})
    macro = json.loads(written["ner"].read_text())
    assert macro["average"] == "macro" and list(macro["test_sets"]) == [str(ner_dev), str(unannotated)]
    assert macro["test_sets"][str(ner_dev)] == {k: v for k, v in one.items() if k != "run"}  # scoring the set for GENE first changed nothing
    for key in ("ents_p", "ents_r", "ents_f"):
        assert macro[key] == pytest.approx(((one[key] or 0.0) + (other[key] or 0.0)) / 2)
        assert macro["doc_ents"][key] == pytest.approx(((one["doc_ents"][key] or 0.0) + (other["doc_ents"][key] or 0.0)) / 2)
    assert macro["docs"] == one["docs"] + other["docs"] and macro["types"] == ["DISEASE"]
    assert "test_sets" not in one and one["types"] == ["DISEASE"]  # one test set: its own scores
    with pytest.raises(ValueError, match="both a dev set"):
        evaluate_multitask(trained, tmp_path / "bad", {"ner": (["DISEASE"], [ner_dev])}, hoc_dev=ner_dev)
    with pytest.raises(ValueError, match="names no test set"):
        evaluate_multitask(trained, tmp_path / "bad", {"ner": (["DISEASE"], [])})
    with pytest.raises(ValueError, match="more than once"):
        evaluate_multitask(trained, tmp_path / "bad", {"ner": (["DISEASE"], [ner_dev, ner_dev])})
    copy = tmp_path / "gene_copy.spacy"
    copy.write_bytes(gene_dev.read_bytes())
    result = CliRunner().invoke(app, ["evaluate", "multitask", str(trained), str(tmp_path / "cli"),
                                      "--entities", f"ner_gene=GENE={gene_dev},{copy}"])
    assert result.exit_code == 0, result.output
    gene = json.loads((tmp_path / "cli" / "ner_gene_test.json").read_text())
    assert gene["ents_f"] == pytest.approx(gene["test_sets"][str(gene_dev)]["ents_f"])  # a set and its copy: its score
    assert sorted(path.name for path in (tmp_path / "cli").iterdir()) == ["ner_gene_test.json"]


def test_the_config_grown_by_entity_types_and_chemprot_trains_with_spacy_train_and_scores_chemprot_end_to_end(overrides, tmp_path):
    from typer.testing import CliRunner

    from spacy.cli.train import train

    from spacy_biolm.cli import app

    nlp = spacy.blank("en")
    docs = []
    for i in range(3):
        doc = nlp.make_doc(f"Cisplatin {i} induces BRCA1 in mice .")
        doc.ents = [Span(doc, 0, 1, label="CHEMICAL"), Span(doc, 3, 4, label="GENE"), Span(doc, 5, 6, label="SPECIES")]
        docs.append(doc)
    (tmp_path / "ner" / "BioNLP13CG").mkdir(parents=True)
    for split in ("train", "devel"):
        DocBin(docs=docs, store_user_data=True).to_disk(tmp_path / "ner" / "BioNLP13CG" / f"{split}.spacy")
    config = tmp_path / "five_types.cfg"
    result = CliRunner().invoke(app, ["release", "add-entity-types", str(CONFIG), str(config), "--corpora-dir", str(tmp_path / "ner"),
                                      "--corpus", "BioNLP13CG", "--type", "CHEMICAL", "--type", "SPECIES"])
    assert result.exit_code == 0, result.output
    # ChemProt's chemical-gene relations beside GAD's, on sentences with their words.
    chemprot = []
    for i in range(3):
        doc = nlp.make_doc(f"Cisplatin {i} inhibits BRCA1 .")
        head, tail = Span(doc, 0, 1, label="CHEMICAL"), Span(doc, 3, 4, label="GENE")
        doc.ents = [head, tail]
        set_relations(doc, [Relation(head, tail, "CPR:4")] if i % 2 else [])
        chemprot.append(doc)
    chemprot_path = tmp_path / "chemprot.spacy"
    DocBin(docs=chemprot, store_user_data=True).to_disk(chemprot_path)
    result = CliRunner().invoke(app, ["release", "add-relation-extractor", str(config), str(config), "--name", "relation_chemprot",
                                      "--dataset", "chemprot", "--task", "chemprot", "--train", str(chemprot_path),
                                      "--dev", str(chemprot_path), "--score-prefix", "chemprot"])
    assert result.exit_code == 0, result.output
    train(config, tmp_path / "out", overrides=overrides)
    trained = spacy.load(tmp_path / "out" / "model-last")
    assert sorted(trained.get_pipe("transformer").listener_map) == sorted(LISTENERS + ("ner_chemical", "ner_species", "relation_chemprot"))
    assert trained.get_pipe("ner_chemical").labels == ("CHEMICAL",) and trained.get_pipe("ner_species").labels == ("SPECIES",)
    assert trained.get_pipe("ner_gene").labels == ("GENE",)
    assert trained.get_pipe("relation_chemprot").labels == ("CPR:3", "CPR:4", "CPR:5", "CPR:6", "CPR:9")
    result = CliRunner().invoke(app, ["evaluate", "multitask", str(tmp_path / "out" / "model-last"), str(tmp_path / "metrics"),
                                      "--entities", f"ner_chemical=CHEMICAL={chemprot_path}", "--relations", overrides["paths.relations_dev"],
                                      "--relations", f"relation_chemprot={chemprot_path}", "--end-to-end", "relation_chemprot"])
    assert result.exit_code == 0, result.output
    gad = json.loads((tmp_path / "metrics" / "relation_extractor_test.json").read_text())
    scores = json.loads((tmp_path / "metrics" / "relation_chemprot_test.json").read_text())
    assert scores["docs"] == 3 and scores["entities_from"] == "gold" and "end_to_end" not in gad
    # Gold entities: the one pair of each sentence; its all-positive baseline labels all three CPR:4 (1 right).
    assert scores["pairs"] == 3 and scores["baselines"]["all positive (CPR:4)"]["rel_micro_p"] == pytest.approx(1 / 3)
    assert set(scores["rel_f_per_type"]) <= {"CPR:4"} and "chemprot_micro_f" in scores
    # End to end: the pairs of the entities it found, their scores against the gold ones.
    found = scores["end_to_end"]
    assert found["docs"] == 3 and set(found["entities"]["ents_per_type"] or {}) <= {"CHEMICAL", "GENE"}
    assert scores["end_to_end_micro_f"] == found["rel_micro_f"] and "end_to_end_baseline_micro_f" in scores
    bad = CliRunner().invoke(app, ["evaluate", "multitask", str(tmp_path / "out" / "model-last"), str(tmp_path / "m2"),
                                   "--entities", f"ner_chemical=CHEMICAL={chemprot_path}", "--end-to-end", "relation_chemprot"])
    assert bad.exit_code != 0 and "have no relation test set" in bad.output
    bad = CliRunner().invoke(app, ["release", "add-entity-types", str(CONFIG), str(tmp_path / "x.cfg"), "--corpora-dir", "ner",
                                   "--corpus", "BioNLP13CG", "--type", "GENE"])
    assert bad.exit_code != 0 and "already has a typed_ner for GENE" in bad.output and not (tmp_path / "x.cfg").exists()


def test_halving_stores_the_encoder_in_float16_and_loads_it_in_float32(trained, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app

    result = CliRunner().invoke(app, ["release", "halve", str(trained), str(tmp_path / "half")])
    assert result.exit_code == 0, result.output
    before, after = (trained / "transformer" / "model").stat().st_size, (tmp_path / "half" / "transformer" / "model").stat().st_size
    assert after < 0.75 * before
    assert (tmp_path / "half" / "ner" / "model").read_bytes() == (trained / "ner" / "model").read_bytes()  # no encoder in it
    nlp, half = spacy.load(trained), spacy.load(tmp_path / "half")
    (shim,) = [shim for node in half.get_pipe("transformer").model.walk() for shim in node.shims]
    assert {str(p.dtype) for p in shim._model.parameters()} == {"torch.float32"}
    text = "The BRCA1 protein binds RAD51 in ataxia telangiectasia . Tumour cells evade apoptosis ."
    assert half(text).cats == pytest.approx(nlp(text).cats, abs=1e-2)
    again = CliRunner().invoke(app, ["release", "halve", str(trained), str(tmp_path / "half")])
    assert again.exit_code != 0 and "exists" in again.output
    (tmp_path / "half" / "stale").write_text("from an earlier copy")
    rerun = CliRunner().invoke(app, ["release", "halve", str(trained), str(tmp_path / "half"), "--overwrite"])
    assert rerun.exit_code == 0, rerun.output
    assert not (tmp_path / "half" / "stale").exists() and (tmp_path / "half" / "transformer" / "model").stat().st_size == after
    (tmp_path / "notes").mkdir()
    kept = CliRunner().invoke(app, ["release", "halve", str(trained), str(tmp_path / "notes"), "--overwrite"])
    assert kept.exit_code != 0 and "not a saved spaCy pipeline" in kept.output and (tmp_path / "notes").is_dir()


def test_listener_gradients_measure_each_heads_pull_on_the_transformer(overrides, tmp_path):
    from typer.testing import CliRunner

    from spacy_biolm.cli import app
    from spacy_biolm.training.listener_gradients import listener_gradients

    first = listener_gradients(CONFIG, 2, {**overrides, "components.ner.model.tok2vec.grad_factor": 1.0})
    assert first["upstream"] == "transformer" and sorted(first["heads"]) == sorted(LISTENERS)
    assert len(first["batches"]) == 2 and all(b["examples"] > 0 for b in first["batches"])
    assert all(row["mean_norm"] > 0 for row in first["heads"].values())
    assert max(first["ratio_to_largest"].values()) == 1.0
    # The weights stay as initialised, so a head's gradient scales exactly with its grad_factor.
    halved = listener_gradients(CONFIG, 2, {**overrides, "components.ner.model.tok2vec.grad_factor": 0.5})
    assert halved["heads"]["ner"]["grad_factor"] == 0.5
    assert halved["heads"]["ner"]["mean_norm"] == pytest.approx(first["heads"]["ner"]["mean_norm"] / 2, rel=1e-4)
    assert halved["heads"]["hallmarks"]["mean_norm"] == pytest.approx(first["heads"]["hallmarks"]["mean_norm"], rel=1e-4)
    with pytest.raises(ValueError, match="at least 1"):
        listener_gradients(CONFIG, 0, overrides)
    # The command line writes the measurement with its run record; a config without listeners is an error.
    args = [f"--{key}={value}" for key, value in overrides.items()]
    result = CliRunner().invoke(app, ["evaluate", "listener-gradients", str(CONFIG), str(tmp_path / "g.json"),
                                      "--batches", "1", *args])
    assert result.exit_code == 0, result.output
    written = json.loads((tmp_path / "g.json").read_text())
    assert written["run"]["commit"] and len(written["batches"]) == 1
    result = CliRunner().invoke(app, ["evaluate", "listener-gradients", str(CONFIG), str(tmp_path / "none.json"),
                                      *args, "--nlp.pipeline", '["sentencizer"]'])
    assert result.exit_code != 0 and not (tmp_path / "none.json").exists()
    assert "with listeners, found none" in result.output
