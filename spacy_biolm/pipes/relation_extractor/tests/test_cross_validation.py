"""`cross_validate` end to end on two tiny folds: convert, spacy train, score, summarise."""

import json
from pathlib import Path

from spacy_biolm.experiments.relations import cross_validate

REPO = Path(__file__).resolve().parents[4]


def write_fold(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    rows = [(f"Mutations in @GENE$ {'cause' if i % 2 else 'spare'} @DISEASE$ in family {i} .", i % 2) for i in range(n)]
    (folder / "train.tsv").write_text("".join(f"{s}\t{label}\n" for s, label in rows), encoding="utf8")
    test = "index\tsentence\tlabel\n" + "".join(f"{i}\t{s}\t{label}\n" for i, (s, label) in enumerate(rows[:6]))
    (folder / "test.tsv").write_text(test, encoding="utf8")


def test_two_fold_cross_validation_writes_per_fold_and_mean_std(relation_encoder, tmp_path):
    for fold in (1, 2):
        write_fold(tmp_path / "folds" / str(fold), 20)
    overrides = {"paths.encoder": str(relation_encoder), "training.max_steps": 2, "training.eval_frequency": 1}
    summary = cross_validate(REPO / "configs" / "relations_anonymised.cfg", tmp_path / "folds", tmp_path / "cv",
                             folds=[1, 2], overrides=overrides)
    assert [f["fold"] for f in summary["folds"]] == [1, 2]
    assert all(f["pairs"] == 6 for f in summary["folds"])
    saved = json.loads((tmp_path / "cv" / "cv.json").read_text())
    assert saved["architecture"] == "spacy-biolm.RelationAnonymised.v1" and "rel_micro_f_std" in saved
    assert (tmp_path / "cv" / "fold_2" / "test_scores.json").is_file()
    assert "| mean (std) |" in (tmp_path / "cv" / "cv.md").read_text()
