"""Retired ids of a knowledge base (OBO alt_id and replaced_by chains, UMLS MRCUI merges), and
where they are mapped: evaluation, coverage and the training documents."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.analysis.coverage import coverage
from xlnel.cli.main import app
from xlnel.config import load_config
from xlnel.errors import FormatError
from xlnel.io import read_obo, write_jsonl
from xlnel.io.kb_history import kb_id_history, kb_ids_history, read_obo_id_history, resolve_ids
from xlnel.training import load_training_documents
from xlnel.types import Document, Link

# HP:2 was merged into HP:1 (alt_id HP:7); HP:3 was obsoleted for HP:4, which was obsoleted
# later for HP:1 (a chain); HP:5 names only terms to consider; HP:6 names two successors;
# HP:8 and HP:9 replace each other (a cycle, never followed forever).
OBO = """format-version: 1.2

[Term]
id: HP:1
name: Short stature
alt_id: HP:7 ! merged
is_a: HP:0 ! root

[Term]
id: HP:3
name: obsolete Small body
is_obsolete: true
replaced_by: HP:4

[Term]
id: HP:4
name: obsolete Small size
is_obsolete: true
replaced_by: HP:1 ! Short stature

[Term]
id: HP:5
name: obsolete Vague
is_obsolete: true
consider: HP:1

[Term]
id: HP:6
name: obsolete Split
is_obsolete: true
replaced_by: HP:1
replaced_by: HP:4

[Term]
id: HP:8
name: obsolete Loop a
is_obsolete: true
replaced_by: HP:9

[Term]
id: HP:9
name: obsolete Loop b
is_obsolete: true
replaced_by: HP:8
"""


@pytest.fixture
def obo(tmp_path: Path) -> Path:
    path = tmp_path / "onto.obo"
    path.write_text(OBO, encoding="utf-8")
    return path


def test_history_follows_alt_ids_and_replacement_chains(obo: Path) -> None:
    assert read_obo_id_history(obo) == {"HP:7": "HP:1", "HP:3": "HP:1", "HP:4": "HP:1"}
    assert kb_id_history(f"obo:{obo}") == kb_id_history(obo) == read_obo_id_history(obo)


def test_formats_without_history_and_missing_files(tmp_path: Path) -> None:
    tsv = tmp_path / "kb.tsv"
    tsv.write_text("concept_id\tname\nC1\tx\n", encoding="utf-8")
    assert kb_id_history(tsv) == {}
    with pytest.raises(FileNotFoundError, match="missing.obo"):
        kb_id_history(f"obo:{tmp_path / 'missing.obo'}")


def test_bundled_hpo_history() -> None:
    history = kb_id_history("hpo")
    assert history and all(k.startswith("HP:") and v.startswith("HP:") for k, v in
                           history.items())
    assert kb_id_history("hpo-umls") == {}


def test_resolve_ids_keeps_order_without_repeats() -> None:
    history = {"HP:7": "HP:1", "HP:3": "HP:1"}
    assert resolve_ids(["HP:7", "HP:2", "HP:3", "HP:1"], history) == ("HP:1", "HP:2")
    assert resolve_ids([], history) == ()


def test_coverage_maps_retired_gold_ids(obo: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.tsv"
    gold.write_text("hpo_id\tenglish\ttranslation\nHP:3\tSmall body\tShort stature\n"
                    "HP:5\tVague\tShort stature\n", encoding="utf-8")
    dictionary = f"obo:{obo}"
    assert coverage(dictionary, [gold]).total.linked_at_1 == 0
    report = coverage(dictionary, [gold], kb=dictionary)
    assert report.total.linked_at_1 == 1  # HP:3 -> HP:1; HP:5 has no single successor
    assert report.settings["ids_resolved"] == 1
    r = CliRunner().invoke(app, ["dictionary", "coverage", dictionary, str(gold), "--json",
                                 "--kb", dictionary])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["total"]["linked_at_1"] == 1 and out["kb"] == dictionary


def test_evaluate_maps_retired_ids_in_gold_and_predictions(obo: Path, tmp_path: Path) -> None:
    text = "Short stature. Small body."
    gold = [Document("1", text, (Link(0, 13, "Short stature", ("HP:7",)),
                                 Link(15, 25, "Small body", ("HP:5",))))]
    pred = [Document("1", text, (Link(0, 13, "Short stature", ("HP:1",)),
                                 Link(15, 25, "Small body", ("HP:1",))))]
    write_jsonl(tmp_path / "gold.jsonl", gold)
    write_jsonl(tmp_path / "pred.jsonl", pred)

    def concept_tp(*extra: str) -> int:
        r = CliRunner().invoke(app, ["evaluate", str(tmp_path / "gold.jsonl"),
                                     str(tmp_path / "pred.jsonl"), "--level", "concept",
                                     "--no-ci", "--json", *extra])
        assert r.exit_code == 0, r.output
        return int(json.loads(r.stdout)["concept"]["scores"]["tp"])

    assert concept_tp() == 0
    assert concept_tp("--kb", f"obo:{obo}") == 1  # HP:7 is HP:1's alt_id; HP:5 stays retired
    r = CliRunner().invoke(app, ["evaluate", str(tmp_path / "gold.jsonl"),
                                 str(tmp_path / "pred.jsonl"), "--kb", "obo:missing.obo"])
    assert r.exit_code != 0 and "missing.obo" in str(r.exception)  # main() prints it


MRCUI = """C0000001|2017AA|SY|||C0000010|Y|
C0000002|2017AA|DEL|||||
C0000003|2018AB|RO|||C0000011|Y|
C0000004|2019AA|SY|||C0000012|Y|
C0000004|2019AA|SY|||C0000013|Y|

"""


def test_mrcui_beside_mrconso_maps_merged_cuis_only(tmp_path: Path,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="xlnel.io.kb_history")
    mrconso = tmp_path / "MRCONSO.RRF"
    mrconso.write_text("", encoding="utf-8")
    assert kb_id_history(f"mrconso:{mrconso}") == {}
    assert "no MRCUI.RRF beside" in caplog.text
    (tmp_path / "MRCUI.RRF").write_text(MRCUI, encoding="utf-8")
    # C0000001 merged (SY); deleted, other-mapped and twice-merged CUIs keep their ids
    assert kb_id_history(mrconso) == {"C0000001": "C0000010"}


def test_malformed_mrcui_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "MRCONSO.RRF").write_text("", encoding="utf-8")
    (tmp_path / "MRCUI.RRF").write_text("C0000001|2017AA|SY|||C0000010|Y|\nC0000002|SY|\n",
                                        encoding="utf-8")
    with pytest.raises(FormatError, match=r"MRCUI\.RRF:2: .*3 '\|'-separated fields"):
        kb_id_history(tmp_path / "MRCONSO.RRF")


def test_training_documents_take_the_current_ids(obo: Path, tmp_path: Path) -> None:
    text = "Short stature. Small body."
    docs = [Document(str(i), text, (Link(0, 13, "Short stature", ("HP:7",)),
                                    Link(15, 25, "Small body", ("HP:5",)))) for i in range(4)]
    write_jsonl(tmp_path / "train.jsonl", docs)
    config = load_config(None, {"lang": "en", "dictionary.kb": [f"obo:{obo}"],
                                "data.train": str(tmp_path / "train.jsonl"),
                                "data.test_fraction": 0.25})
    train, test = load_training_documents(config)
    assert len(train) == 3 and len(test) == 1
    for doc in train + test:  # HP:7 is HP:1's alt_id; HP:5 has no single successor
        assert [e.concept_ids for e in doc.entities] == [("HP:1",), ("HP:5",)]
    config = load_config(None, {"lang": "en", "dictionary.kb": [],
                                "data.train": str(tmp_path / "train.jsonl")})
    assert load_training_documents(config)[0][0].entities[0].concept_ids == ("HP:7",)


def test_evaluate_refuses_kb_with_protocol(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "gold.jsonl", [Document("1", "x", ())])
    r = CliRunner().invoke(app, ["evaluate", str(tmp_path / "gold.jsonl"), "--protocol",
                                 "galperin2022", "--pipeline", str(tmp_path), "--kb", "hpo"])
    assert r.exit_code == 2 and "--kb" in r.output


def test_kb_command_counts_retired_ids(obo: Path) -> None:
    r = CliRunner().invoke(app, ["kb", f"obo:{obo}", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["retired_ids"] == 3
    r = CliRunner().invoke(app, ["kb", f"obo:{obo}"])
    assert "3 retired ids mapped to current concepts" in r.output


def test_a_missing_file_of_a_format_without_history_is_no_error(tmp_path: Path) -> None:
    assert kb_id_history(f"tsv:{tmp_path / 'gone.tsv'}") == {}
    assert kb_ids_history([f"obo:{tmp_path / 'gone.obo'}", "hpo"], missing_ok=True)
    with pytest.raises(FileNotFoundError, match="gone.obo"):
        kb_ids_history([f"obo:{tmp_path / 'gone.obo'}"])


def test_candidate_recall_reads_gold_ids_as_the_pipeline_kb_does(
        tmp_path: Path, pipe_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import xlnel.corpus.linking as linking

    text = "She has diabetes."
    write_jsonl(tmp_path / "gold.jsonl", [Document("1", text, (Link(8, 16, "diabetes",
                                                                     ("OLD1",)),))])
    before = linking.candidate_recall(pipe_dir, tmp_path / "gold.jsonl")["concept"]
    monkeypatch.setattr(linking, "kb_ids_history", lambda specs, missing_ok=False: {"OLD1": "C1"})
    after = linking.candidate_recall(pipe_dir, tmp_path / "gold.jsonl")["concept"]
    assert (before["found"], after["found"]) == (0, 1)


def test_mesh_prefixed_obo_ids_are_read_as_corpora_read_them(tmp_path: Path) -> None:
    # CTD's MEDIC vocabulary names MeSH descriptors MESH:D...; a PubTator gold says D...
    path = tmp_path / "medic.obo"
    path.write_text("format-version: 1.2\n\n[Term]\nid: MESH:C\nname: Diseases\n\n"
                    "[Term]\nid: MESH:D1 ! x\nname: Fever\nalt_id: MESH:D9\nis_a: MESH:C\n\n"
                    "[Term]\nid: OMIM:2\nname: obsolete Chill\nis_obsolete: true\n"
                    "replaced_by: MESH:D1\n", encoding="utf-8")
    assert [(c.id, c.types) for c in read_obo(path, branch_types=True)] == [
        ("C", ()), ("D1", ("Fever",))]
    assert read_obo_id_history(path) == {"D9": "D1", "OMIM:2": "D1"}
