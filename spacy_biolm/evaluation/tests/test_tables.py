import json

from spacy_biolm.evaluation.tables import ner_results_table


def test_ner_table_puts_our_scores_beside_the_paper(tmp_path):
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"ents_p": 0.8, "ents_r": 0.7, "ents_f": 0.746667, "speed": 12345.6}))
    paper = tmp_path / "paper.json"
    paper.write_text(json.dumps({"bio_electra_2020": {
        "models": {"bio_electra": "Bio-ELECTRA"},
        "ner": {"NCBI-disease": {"bio_electra": [73.47, 83.88, 78.32]}, "BC2GM": {"bio_electra": [1, 2, 3]}},
    }}))
    table = ner_results_table({"tiny (ours)": ours}, dataset="NCBI-disease", paper_results=paper)
    lines = table.splitlines()
    assert lines[0].startswith("NCBI-disease test set")
    assert "| tiny (ours) | 80.00 | 70.00 | 74.67 | 12,346 |" in lines
    assert "| Bio-ELECTRA (paper) | 73.47 | 83.88 | 78.32 |  |" in lines
    assert len([line for line in lines if line.startswith("| ")]) == 3  # header + 2 rows


def test_named_paths_keep_their_order_and_name_a_bad_item():
    from pathlib import Path

    import pytest

    from spacy_biolm.evaluation.tables import parse_named_paths

    named = parse_named_paths(["Bio-ELECTRA tiny (ours)=metrics/ner_test.json", "cnn=a=b.json"])
    assert list(named.items()) == [("Bio-ELECTRA tiny (ours)", Path("metrics/ner_test.json")), ("cnn", Path("a=b.json"))]
    with pytest.raises(ValueError, match="NAME=PATH, got 'metrics/ner_test.json'"):
        parse_named_paths(["metrics/ner_test.json"])
