from __future__ import annotations

import json

from typer.testing import CliRunner

from xlnel.cli.main import app
from xlnel.io import read_documents

runner = CliRunner()


def test_train_link_evaluate_candidates(tmp_path, tiny_config):
    pipe, pred = tmp_path / "pipe", tmp_path / "pred.jsonl"
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(pipe),
                            "--set", "filter.name=xlnel.similarity.v1",
                            "--filter.options", "{}", "--candidates.top_m", "10"])
    assert r.exit_code == 0, r.output
    assert "top_m: 10" in (pipe / "config.yaml").read_text()
    r = runner.invoke(app, ["link", str(pipe), str(pipe / "test.jsonl"), "--out", str(pred)])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["evaluate", str(pipe / "test.jsonl"), str(pred), "--level", "span",
                            "--json"])
    assert r.exit_code == 0
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert set(report["span"]["scores"]) == {"precision", "recall", "f1", "tp", "fp", "fn"}
    missed = tmp_path / "missed.tsv"
    r = runner.invoke(app, ["candidates", str(pipe), str(pipe / "test.jsonl"), "--json",
                            "--missed", str(missed)])
    assert r.exit_code == 0
    report = json.loads(r.stdout.strip().splitlines()[-1])
    assert report["span"]["recall"] > 0.9
    rows = missed.read_text(encoding="utf-8").splitlines()[1:]
    assert len(rows) == sum(r["total"] - r["found"] for r in report.values())


def test_link_text_and_errors(tmp_path, tiny_config):
    pipe = tmp_path / "pipe"
    runner.invoke(app, ["train", str(tiny_config), "--out", str(pipe),
                        "--set", "filter.name=xlnel.similarity.v1", "--set", "filter.options={}",
                        "--set", "filter.threshold=0.9"])
    r = runner.invoke(app, ["link", str(pipe), "--text", "new asthma attack"])
    assert r.exit_code == 0 and "C4" in r.stdout
    assert all(len(line.split("\t")) == 7 for line in r.stdout.splitlines())
    # a tab inside the mention is a space in its column: the row keeps 7 columns
    r = runner.invoke(app, ["link", str(pipe), "--text", "her high\tblood pressure"])
    assert r.exit_code == 0 and r.stdout.split("\t")[2:4] == ["high blood pressure", "C2"]
    # with alternatives asked for, an 8th column lists them (empty here: one concept matched)
    r = runner.invoke(app, ["link", str(pipe), "--text", "new asthma attack",
                            "--set", "linker.alternatives=2"])
    assert r.exit_code == 0 and all(len(line.split("\t")) == 8 for line in r.stdout.splitlines())
    # a text without links prints no row, and says so on stderr
    r = runner.invoke(app, ["link", str(pipe), "--text", "nothing to see"])
    assert r.exit_code == 0 and r.stdout == "" and "no concept linked" in r.stderr
    r = runner.invoke(app, ["link", str(pipe), str(pipe / "test.jsonl")])  # to stdout
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert len(lines) == 6 and all("entities" in d for d in lines)
    r = runner.invoke(app, ["link", str(pipe)])
    assert r.exit_code != 0
    r = runner.invoke(app, ["evaluate", str(tmp_path / "none.jsonl"), str(tmp_path / "x.jsonl")])
    assert r.exit_code != 0
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(pipe), "--set", "dft.R=7"])
    assert r.exit_code != 0 and "dft.R" in str(r.exception)


def test_link_and_convert_to_a_format_on_the_standard_output(tmp_path, tiny_config):
    pipe = tmp_path / "pipe"
    runner.invoke(app, ["train", str(tiny_config), "--out", str(pipe),
                        "--set", "filter.name=xlnel.similarity.v1", "--set", "filter.options={}"])
    gold = pipe / "test.jsonl"
    r = runner.invoke(app, ["link", str(pipe), str(gold), "--out", str(tmp_path / "p.pubtator")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["link", str(pipe), str(gold), "--to", "pubtator"])
    assert r.exit_code == 0, r.output
    assert r.stdout == (tmp_path / "p.pubtator").read_text(encoding="utf-8")
    r = runner.invoke(app, ["link", str(pipe), str(gold), "-o", "-", "--to", "bioc"])
    assert r.exit_code == 0 and r.stdout.startswith("<?xml") and "</collection>" in r.stdout
    r = runner.invoke(app, ["link", str(pipe), str(gold), "--to", "brat"])
    assert isinstance(r.exception, ValueError) and "BRAT is a folder" in str(r.exception)
    r = runner.invoke(app, ["link", str(pipe), "--text", "new asthma attack", "--to", "pubtator"])
    assert r.exit_code == 0 and r.stdout.startswith("text-0|t|new asthma attack\n")
    # --text with --out writes the format the name asks for
    r = runner.invoke(app, ["link", str(pipe), "--text", "new asthma attack",
                            "--out", str(tmp_path / "t.pubtator")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "t.pubtator").read_text(encoding="utf-8").startswith("text-0|t|")
    r = runner.invoke(app, ["convert", str(tmp_path / "p.pubtator"), "-", "--to", "pubtator"])
    assert r.exit_code == 0 and r.stdout == (tmp_path / "p.pubtator").read_text(encoding="utf-8")
    r = runner.invoke(app, ["convert", str(gold), str(tmp_path / "c.out"), "--to", "biocjson"])
    assert r.exit_code == 0, r.output
    assert [d.id for d in read_documents(tmp_path / "c.out", "biocjson")] == \
        [d.id for d in read_documents(gold)]


def test_link_and_evaluate_bioc(tmp_path, tiny_config):
    """A BioC corpus is linked into BioC and scored as its JSONL twin is."""
    from xlnel.io import read_documents, write_documents

    pipe = tmp_path / "pipe"
    r = runner.invoke(app, ["train", str(tiny_config), "--out", str(pipe),
                            "--set", "filter.name=xlnel.similarity.v1", "--set",
                            "filter.options={}"])
    assert r.exit_code == 0, r.output
    gold = tmp_path / "gold.bioc.xml"
    write_documents(gold, read_documents(pipe / "test.jsonl"))
    scores = []
    for src, out in ((pipe / "test.jsonl", tmp_path / "p.jsonl"), (gold, tmp_path / "p.xml")):
        r = runner.invoke(app, ["link", str(pipe), str(src), "--out", str(out)])
        assert r.exit_code == 0, r.output
        r = runner.invoke(app, ["evaluate", str(src), str(out), "--level", "concept", "--json",
                                "--no-ci"])
        assert r.exit_code == 0, r.output
        scores.append(json.loads(r.stdout.strip().splitlines()[-1])["concept"]["scores"])
    assert scores[0] == scores[1] and scores[0]["tp"] > 0
    assert "<annotation" in (tmp_path / "p.xml").read_text(encoding="utf-8")
    # JSONL on the standard input, linked onto the standard output or into a file
    test = (pipe / "test.jsonl").read_bytes()
    r = runner.invoke(app, ["link", str(pipe), "-"], input=test)
    assert r.exit_code == 0, r.output
    piped = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert piped == [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    r = runner.invoke(app, ["link", str(pipe), "-", "--out", str(tmp_path / "s.jsonl")],
                      input=test)
    assert r.exit_code == 0, r.output
    assert (tmp_path / "s.jsonl").read_bytes() == (tmp_path / "p.jsonl").read_bytes()
    # BioC on the standard input, or in a file whose name does not tell its format
    r = runner.invoke(app, ["link", str(pipe), "-", "--from", "bioc", "--out",
                            str(tmp_path / "b.jsonl")], input=gold.read_bytes())
    assert r.exit_code == 0, r.output
    odd = tmp_path / "gold.data"
    odd.write_bytes(gold.read_bytes())
    r = runner.invoke(app, ["link", str(pipe), str(odd), "--from", "bioc", "--out",
                            str(tmp_path / "o.xml")])
    assert r.exit_code == 0, r.output
    assert read_documents(tmp_path / "o.xml") == read_documents(tmp_path / "p.xml")
    r = runner.invoke(app, ["link", str(pipe), "--text", "asthma", "--from", "bioc"])
    assert r.exit_code != 0 and "--from names the format of SOURCE" in r.output
