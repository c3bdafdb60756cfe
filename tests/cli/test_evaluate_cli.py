"""``xlnel evaluate``: levels, intervals, comparison, JSON shape and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.evaluation import LEVELS
from xlnel.io import write_pubtator
from xlnel.types import Document, Link

runner = CliRunner()

TITLE, ABSTRACT = "Aspirin and headache.", "Fever in diabetes and hypertension."
TEXT = f"{TITLE} {ABSTRACT}"


def link(mention: str, *ids: str, type: str = "Disease") -> Link:
    start = TEXT.index(mention)
    return Link(start, start + len(mention), mention, ids, type)


def write(path: Path, docs: list[Document]) -> Path:
    write_pubtator(path, docs)
    return path


@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    gold = [
        Document(f"{n}", TEXT, (
            link("Aspirin", "D1", type="Chemical"), link("headache", "D2"),
            link("Fever", "D3"), link("diabetes", "D4", "D5"), link("hypertension"),
        ), {"title": TITLE})
        for n in range(4)
    ]
    good = [Document(d.id, d.text, d.entities[:4], d.metadata) for d in gold]
    poor = [Document(d.id, d.text, d.entities[:1], d.metadata) for d in gold]
    return {
        "gold": write(tmp_path / "gold.pubtator", gold),
        "good": write(tmp_path / "good.pubtator", good),
        "poor": write(tmp_path / "poor.pubtator", poor),
        "partial": write(tmp_path / "partial.pubtator", good[:2]),
        "other": write(tmp_path / "other.pubtator", [
            Document("x9", TEXT, (), {"title": TITLE})]),
    }


def invoke(*args: object) -> tuple[int, str, BaseException | None]:
    result = runner.invoke(app, ["evaluate", *(str(a) for a in args)])
    return result.exit_code, result.stdout, result.exception


def test_json_shape_all_levels(files: dict[str, Path]) -> None:
    code, out, _ = invoke(files["gold"], files["good"], "--level", "all", "--by-type", "--json",
                          "--bootstrap", "50")
    assert code == 0, out
    report = json.loads(out)
    assert list(report) == list(LEVELS)
    for level in LEVELS:
        assert set(report[level]) == {"scores", "ci", "by_type", "comparison"}
        assert report[level]["ci"]["n_resamples"] == 50
        assert report[level]["comparison"] is None
    # four of five mentions (the id-less one missed); the composite D4|D5 found
    assert report["span"]["scores"]["tp"] == 16 and report["span"]["scores"]["fn"] == 4
    assert report["concept"]["scores"]["recall"] == pytest.approx(1.0)
    assert report["document"]["scores"]["tp"] == 4 * 5  # D1..D5 in each of four documents
    assert set(report["document"]["by_type"]) == {"Chemical", "Disease"}


def test_compare_and_no_ci(files: dict[str, Path]) -> None:
    code, out, _ = invoke(files["gold"], files["poor"], "--compare", files["good"], "--no-ci",
                          "--level", "span", "--level", "document", "--json", "--seed", "3")
    assert code == 0, out
    report = json.loads(out)
    assert list(report) == ["span", "document"]
    assert report["span"]["ci"] is None
    comparison = report["span"]["comparison"]
    assert comparison["delta_f1"] > 0 and comparison["seed"] == 3
    assert comparison["b"]["tp"] == 16 and comparison["a"]["tp"] == 4


def test_predictions_in_any_format_on_the_standard_input(files: dict[str, Path],
                                                         tmp_path: Path) -> None:
    expected = invoke(files["gold"], files["good"], "--json", "--no-ci")
    piped = runner.invoke(app, ["evaluate", str(files["gold"]), "-", "--from", "pubtator",
                                "--json", "--no-ci"], input=files["good"].read_text())
    assert piped.exit_code == 0, piped.output
    assert json.loads(piped.stdout) == json.loads(expected[1])
    # --from names the format of PRED and --compare when their names do not tell it
    renamed = tmp_path / "good.predictions"
    renamed.write_bytes(files["good"].read_bytes())
    code, out, _ = invoke(files["gold"], renamed, "--compare", renamed, "--from", "pubtator",
                          "--json", "--no-ci")
    assert code == 0 and json.loads(out)["span"]["scores"] == \
        json.loads(expected[1])["span"]["scores"]
    code, _, error = invoke(files["gold"], "-", "--from", "text")
    assert code != 0 and "plain-text" in str(error)
    code, _, error = invoke(files["gold"], "--pipeline", tmp_path, "--protocol", "galperin2022",
                            "--from", "pubtator")
    assert code != 0


@pytest.mark.parametrize("extra", [
    ["{good}"], ["--level", "concept"], ["--compare", "{good}"], ["--by-type"],
    ["--bootstrap", "50"], ["--no-ci"]])
def test_protocol_refuses_what_it_does_not_use(files: dict[str, Path], tmp_path: Path,
                                               extra: list[str]) -> None:
    args = [a.format(good=files["good"]) for a in extra]
    name = f"PRED ({files['good']})" if args == [str(files["good"])] else args[0]
    result = runner.invoke(app, ["evaluate", str(files["gold"]), *args, "--pipeline",
                                 str(tmp_path), "--protocol", "galperin2022"])
    assert result.exit_code == 2
    message = " ".join(result.output.replace("│", " ").split())
    assert f"it does not use {name}: leave it out" in message


def test_pipeline_without_protocol_is_refused(files: dict[str, Path], tmp_path: Path) -> None:
    result = runner.invoke(app, ["evaluate", str(files["gold"]), str(files["good"]),
                                 "--pipeline", str(tmp_path)])
    assert result.exit_code == 2
    assert "give --protocol or leave --pipeline out" in " ".join(
        result.output.replace("│", " ").split())


def test_text_output(files: dict[str, Path]) -> None:
    code, out, _ = invoke(files["gold"], files["good"], "--level", "span-prefix")
    assert code == 0, out
    assert "== span-prefix ==" in out and "95% CI" in out and "1000 bootstrap resamples" in out


def test_refuses_empty_and_unrelated_predictions(files: dict[str, Path], tmp_path: Path) -> None:
    empty = tmp_path / "empty.pubtator"
    empty.write_text("")
    code, _, error = invoke(files["gold"], empty)
    assert code != 0 and "empty.pubtator holds no document" in str(error)
    code, _, error = invoke(files["gold"], files["other"])
    assert code != 0 and "none of the 1 document ids" in str(error)
    code, _, error = invoke(files["gold"], tmp_path / "sub")
    assert code != 0 and isinstance(error, FileNotFoundError)
    (tmp_path / "sub").mkdir()
    code, _, error = invoke(files["gold"], tmp_path / "sub")
    assert code != 0 and "folder without BRAT" in str(error)
    result = runner.invoke(app, ["evaluate", str(files["gold"])])
    assert result.exit_code != 0 and "give PRED" in result.output
    code, _, error = invoke(files["gold"], files["good"], "--level", "token")
    assert code != 0 and "'token'" in str(error)


def test_partial_predictions_warn(
    files: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    code, out, _ = invoke(files["gold"], files["partial"], "--json", "--no-ci")
    assert code == 0
    # two predicted documents miss one mention each, two unpredicted documents all five
    assert json.loads(out)["span"]["scores"]["fn"] == 2 * 1 + 2 * 5
    assert "2 of 4 gold documents have no predictions" in caplog.text


def test_errors_file(files: dict[str, Path], tmp_path: Path) -> None:
    errors = tmp_path / "errors.tsv"
    code, out, _ = invoke(files["gold"], files["poor"], "--level", "concept", "--level",
                          "document", "--no-ci", "--json", "--errors", errors)
    assert code == 0, out
    report = json.loads(out)
    rows = [line.split("\t") for line in errors.read_text(encoding="utf-8").splitlines()[1:]]
    for level in ("concept", "document"):
        kinds = [r[2] for r in rows if r[1] == level]
        assert kinds.count("fn") == report[level]["scores"]["fn"]
        assert kinds.count("fp") == report[level]["scores"]["fp"]
    assert {r[3] for r in rows} == {"missed"}
    code, _, exc = invoke(files["gold"], files["poor"], "--errors", files["poor"])
    assert code != 0 and "is the input" in str(exc)
    result = runner.invoke(app, ["evaluate", str(files["gold"]), "--protocol", "galperin2022",
                                 "--pipeline", str(tmp_path), "--errors", str(errors)])
    assert result.exit_code != 0 and "--errors lists the errors of PRED" in result.output


def test_refused_predictions_leave_no_errors_file(files: dict[str, Path], tmp_path: Path) -> None:
    errors = tmp_path / "refused.tsv"
    code, _, _ = invoke(files["gold"], files["other"], "--no-ci", "--errors", errors)
    assert code != 0 and not errors.exists()


def test_jsonl_gold_scores_its_pubtator_predictions(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "a", "text": "She had seizures.", "entities": [{"start": 8, '
                    '"end": 16, "text": "seizures", "concept_id": "C1"}]}\n', encoding="utf-8")
    pred = tmp_path / "pred.pubtator"
    assert runner.invoke(app, ["convert", str(gold), str(pred)]).exit_code == 0
    code, out, _ = invoke(gold, pred, "--json", "--no-ci")
    assert code == 0 and json.loads(out)["span"]["scores"]["f1"] == 1.0


def test_gold_tabs_and_line_breaks_written_as_spaces_still_score(tmp_path: Path) -> None:
    # PubTator writes the tab and the line breaks of the gold text as spaces (offsets kept).
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"id": "a", "text": "Fever\tand\r\ndiabetes.\nNo", "entities": [
        {"start": 0, "end": 5, "text": "Fever", "concept_id": "C1"},
        {"start": 11, "end": 19, "text": "diabetes", "concept_id": "C2"}]}) + "\n",
        encoding="utf-8")
    pred = tmp_path / "pred.pubtator"
    assert runner.invoke(app, ["convert", str(gold), str(pred)]).exit_code == 0
    assert "Fever and  diabetes. No" in pred.read_text(encoding="utf-8")
    errors = tmp_path / "errors.tsv"
    code, out, _ = invoke(gold, pred, "--json", "--no-ci", "--level", "all", "--errors", errors)
    assert code == 0
    assert all(level["scores"]["f1"] == 1.0 for level in json.loads(out).values())
    assert errors.read_text(encoding="utf-8").count("\n") == 1  # the header alone
    # any other difference is still refused
    pred.write_text(pred.read_text(encoding="utf-8").replace("Fever and", "Fever an_"),
                    encoding="utf-8")
    code, _, error = invoke(gold, pred, "--no-ci")
    assert code != 0 and f"in {pred} differs from its text in {gold} at character 8" in str(error)


def test_differing_texts_name_both_files_and_the_place(files: dict[str, Path],
                                                       tmp_path: Path) -> None:
    shifted = write(tmp_path / "shifted.pubtator", [Document("0", TEXT.replace("Fever", "Fiver"))])
    code, _, error = invoke(files["gold"], shifted)
    message = str(error)
    assert code != 0 and "document '0'" in message
    assert f"in {shifted} differs from its text in {files['gold']}" in message
    assert f"at character {TEXT.index('Fever') + 1}" in message
    assert "gold 'ever" in message and "predicted 'iver" in message


def test_repeated_gold_id_names_file_and_lines(tmp_path: Path) -> None:
    gold = tmp_path / "dup.pubtator"
    gold.write_text("1|t|A b\n1|a|c\n\n1|t|D e\n1|a|f\n", encoding="utf-8")
    code, _, error = invoke(gold, gold)
    assert code != 0 and f"{gold}:4: document id '1' already used on line 1" in str(error)


def test_negative_seed_is_refused_naming_the_option(files: dict[str, Path]) -> None:
    result = runner.invoke(app, ["evaluate", str(files["gold"]), str(files["good"]), "--seed",
                                 "-1"])
    assert result.exit_code == 2 and "--seed" in result.output
