"""Tests of the BioC XML reader and writer."""

from __future__ import annotations

import gzip
import logging
from pathlib import Path

import pytest

from xlnel.errors import FormatError
from xlnel.io import iter_bioc, read_bioc, read_documents, write_bioc, write_documents
from xlnel.io.pubtator import write_pubtator
from xlnel.outputs import corpus_output_format
from xlnel.types import Document, Link

TITLE = "Lithium carbonate toxicity."
ABSTRACT = "Ovarian and breast cancer."
# BC5CDR's layout: a title and an abstract passage, ids in a MESH infon, a composite mention
# with its parts, a relation given by infons alone.
SAMPLE = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE collection SYSTEM "BioC.dtd">
<collection><source>BioCreative V CDR</source><date>2015</date><key>BioC.key</key>
<document><id>6794356</id>
<passage><infon key="type">title</infon><offset>0</offset><text>{TITLE}</text>
<annotation id="0"><infon key="MESH">D016651</infon><infon key="type">Chemical</infon>
<location offset="0" length="17"/><text>Lithium carbonate</text></annotation>
<annotation id="1"><infon key="MESH">-1</infon><infon key="type">Disease</infon>
<location offset="18" length="8"/><text>toxicity</text></annotation>
</passage>
<passage><infon key="type">abstract</infon><offset>28</offset><text>{ABSTRACT}</text>
<annotation id="2"><infon key="CompositeRole">CompositeMention</infon>
<infon key="MESH">D010051|D001943</infon><infon key="type">Disease</infon>
<location offset="28" length="25"/><text>Ovarian and breast cancer</text></annotation>
<annotation id="3"><infon key="CompositeRole">IndividualMention</infon>
<infon key="MESH">D010051</infon><infon key="type">Disease</infon>
<location offset="28" length="7"/><location offset="47" length="6"/>
<text>Ovarian cancer</text></annotation>
</passage>
<relation id="R0"><infon key="relation">CID</infon><infon key="Chemical">D016651</infon>
<infon key="Disease">D010051</infon></relation>
</document>
<document><id>2</id><infon key="year">2001</infon>
<passage><offset>0</offset>
<sentence><offset>0</offset><text>Insulin.</text></sentence>
<sentence><offset>9</offset><text>Fever &amp; cough.</text>
<annotation id="T1"><infon key="identifier">MESH:D005334</infon><infon key="type">Disease</infon>
<location offset="9" length="5"/><text>Fever</text></annotation>
<annotation id="T2"><infon key="NCBI_Gene">3630</infon><infon key="type">Gene</infon>
<location offset="0" length="7"/><text>Insulin</text></annotation></sentence>
</passage>
</document>
</collection>
"""


def _write(tmp_path: Path, content: str, name: str = "corpus.xml") -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def test_read_passages_ids_and_composites(tmp_path: Path) -> None:
    first, second = read_bioc(_write(tmp_path, SAMPLE))
    assert first.id == "6794356"
    assert first.text == f"{TITLE} {ABSTRACT}"
    assert first.entities == (
        Link(0, 17, "Lithium carbonate", ("D016651",), "Chemical"),
        Link(18, 26, "toxicity", (), "Disease"),
        Link(28, 53, "Ovarian and breast cancer", ("D010051", "D001943"), "Disease"),
    )  # the composite's part is not a mention of its own
    assert first.metadata["title"] == TITLE
    assert first.metadata["bioc_relations"] == [
        {"id": "R0", "infons": {"relation": "CID", "Chemical": "D016651",
                                "Disease": "D010051"}, "nodes": []}]
    assert second.text == "Insulin. Fever & cough."
    assert second.entities == (Link(0, 7, "Insulin", ("3630",), "Gene"),
                               Link(9, 14, "Fever", ("D005334",), "Disease"))
    assert second.metadata["bioc_infons"] == {"year": "2001"}


def test_converts_to_pubtator_as_bc5cdr_ships_it(tmp_path: Path) -> None:
    out = tmp_path / "c.pubtator"
    write_documents(out, read_documents(_write(tmp_path, SAMPLE)))
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[:6] == [
        f"6794356|t|{TITLE}", f"6794356|a|{ABSTRACT}",
        "6794356\t0\t17\tLithium carbonate\tChemical\tD016651",
        "6794356\t18\t26\ttoxicity\tDisease\t-1",
        "6794356\t28\t53\tOvarian and breast cancer\tDisease\tD010051|D001943",
        "6794356\tCID\tD016651\tD010051"]


def test_write_then_read_keeps_passages_predictions_and_relations(tmp_path: Path) -> None:
    docs = read_bioc(_write(tmp_path, SAMPLE))
    predicted = Link(0, 7, "Lithium", ("D008094",), "Chemical", 0.75, "concept", "Lithium",
                     None, "lithium", "kb", (("D016651", 0.5, 0.8),))
    docs[0] = Document(docs[0].id, docs[0].text, (*docs[0].entities, predicted),
                       docs[0].metadata)
    write_bioc(tmp_path / "out.xml", docs)
    back = read_bioc(tmp_path / "out.xml")
    assert [(d.id, d.text, set(d.entities), d.metadata) for d in back] == [
        (d.id, d.text, set(d.entities), d.metadata) for d in docs]
    written = (tmp_path / "out.xml").read_text(encoding="utf-8")
    assert '<infon key="score">0.75</infon>' in written
    assert written.count("<passage>") == 3


def test_other_formats_are_written_as_title_and_abstract_or_one_passage(tmp_path: Path) -> None:
    docs = [Document("1", "Title. Abstract text.", (Link(7, 15, "Abstract", ("D1",)),),
                     {"title": "Title.", "relations": [("CID", "D1", "D2")]}),
            Document("n", "line one\r\nline two\ttab", (Link(10, 14, "line"),))]
    write_bioc(tmp_path / "c.xml.gz", docs)
    with gzip.open(tmp_path / "c.xml.gz", "rt", encoding="utf-8") as handle:
        written = handle.read()
    assert '<infon key="type">abstract</infon>\n      <offset>7</offset>' in written
    assert "&#13;" in written  # a parser would read a literal \r\n as \n
    first, second = read_bioc(tmp_path / "c.xml.gz")
    assert first.metadata["title"] == "Title."
    assert first.metadata["bioc_relations"][0]["infons"] == {
        "relation": "CID", "arg1": "D1", "arg2": "D2"}
    assert second.text == docs[1].text
    assert second.entities == (Link(10, 14, "line"),)
    assert first.entities == docs[0].entities


def test_characters_xml_cannot_hold_become_spaces(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    doc = Document("d", "a\x0cb c", (Link(0, 3, "a\x0cb"),))
    with caplog.at_level(logging.WARNING, logger="xlnel.io.bioc"):
        write_bioc(tmp_path / "c.xml", [doc])
    assert "written as spaces" in caplog.text
    (back,) = read_bioc(tmp_path / "c.xml")
    assert back.text == "a b c"
    assert back.entities == (Link(0, 3, "a b"),)


def test_unusable_kept_passages_fall_back_to_one_passage(tmp_path: Path) -> None:
    bad = {"bioc_passages": [{"offset": 0, "length": 3}, {"offset": 2, "length": 9}]}
    write_bioc(tmp_path / "c.xml", [Document("d", "abc def", (), bad)])
    (back,) = read_bioc(tmp_path / "c.xml")
    assert back.metadata["bioc_passages"] == [{"offset": 0, "length": 7, "infons": {}}]


def _doc(body: str) -> str:
    return f"<collection><document><id>d</id>{body}</document></collection>"


_PASSAGE = "<passage><offset>0</offset><text>Fever today</text>{}</passage>"
_ANN = "<annotation id='a'><infon key='type'>X</infon>{}</annotation>"


@pytest.mark.parametrize(("content", "line", "message"), [
    ("<collection><document>", 1, "not well-formed XML"),
    ("", 1, "not well-formed XML"),
    ("<corpus/>", 1, "root element <corpus> is not a BioC <collection>"),
    ('\n{"source": "PubTator", "documents": []}', 2, "it looks like JSON"),
    ("<collection>\n<document><passage><offset>0</offset></passage></document></collection>",
     2, "document without an <id>"),
    (_doc("\n<passage><text>a</text></passage>"), 2, "passage without an <offset>"),
    (_doc("<passage><offset>0</offset><text>abc</text></passage>\n"
          "<passage><offset>2</offset><text>d</text></passage>"), 2, "overlaps the text"),
    (_doc(_PASSAGE.format("\n" + _ANN.format("<text>Fever</text>"))), 2, "has no <location>"),
    (_doc(_PASSAGE.format(_ANN.format("\n<location offset='x' length='5'/>"))), 2,
     "location offset 'x' is not a non-negative integer"),
    (_doc(_PASSAGE.format(_ANN.format("\n<location offset='0' length='0'/>"))), 2,
     "has length 0"),
    (_doc(_PASSAGE.format(_ANN.format("\n<location offset='1_0' length='-5'/>"))), 2,
     "location offset '1_0' is not a non-negative integer"),
    (_doc("\n<passage><offset>200000000</offset></passage>"), 2, "outside 0-100000000"),
    (_doc(_PASSAGE.format(_ANN.format("\n<location offset='6' length='9'/>"))), 2,
     "beyond the text"),
    (_doc(_PASSAGE.format("\n" + _ANN.format("<location offset='0' length='5'/>"
                                             "<text>Fiver</text>"))), 2, "differs from"),
    (_doc(_PASSAGE.format("\n" + _ANN.format("<infon key='score'>high</infon>"
                                             "<location offset='0' length='5'/>"))), 2,
     "score 'high' is not a finite number"),
    ('<!DOCTYPE collection [\n<!ENTITY a "aaaa">]><collection/>', 2,
     "entity declaration 'a'"),
    ("<collection><document><id>d</id></document>\n<document><id>d</id></document>"
     "</collection>", 2, "document id 'd' already used on line 1"),
])
def test_errors_name_file_and_line(tmp_path: Path, content: str, line: int,
                                   message: str) -> None:
    path = _write(tmp_path, content)
    with pytest.raises(FormatError, match=message) as info:
        read_bioc(path)
    assert info.value.line == line
    assert str(path) in str(info.value)


def test_streams_documents_before_a_later_error(tmp_path: Path) -> None:
    good = _doc(_PASSAGE.format(""))[len("<collection>"):-len("</collection>")]
    path = _write(tmp_path, f"<collection>{good}\n<document><passage/></document>")
    stream = iter_bioc(path)
    assert next(stream).id == "d"
    with pytest.raises(FormatError):
        next(stream)


def test_missing_file_and_output_extension(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="absent.xml"):
        read_bioc(tmp_path / "absent.xml")
    assert corpus_output_format(tmp_path / "pred.bioc.xml.gz") == "bioc"


def test_pubtator_writer_skips_relations_it_cannot_hold(tmp_path: Path) -> None:
    relations = [{"id": "R1", "infons": {"type": "Bind"}, "nodes": [["a", "x"], ["b", "y"]]}]
    write_pubtator(tmp_path / "c.pubtator", [Document("1", "t", (), {"bioc_relations":
                                                                       relations})])
    assert (tmp_path / "c.pubtator").read_text(encoding="utf-8") == "1|t|t\n1|a|\n\n"


def test_convert_command_between_formats(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app
    from xlnel.corpus import convert

    runner = CliRunner()
    bioc = _write(tmp_path, SAMPLE)
    jsonl = tmp_path / "c.jsonl"
    result = runner.invoke(app, ["convert", str(bioc), str(jsonl)])
    assert result.exit_code == 0, result.output
    assert "converted 2 documents (5 mentions)" in result.output
    assert read_documents(jsonl) == read_documents(bioc)
    # an input whose name does not tell its format
    odd = tmp_path / "corpus.data"
    odd.write_bytes(bioc.read_bytes())
    assert convert(odd, tmp_path / "c2.jsonl", "bioc") == {"documents": 2, "entities": 5}
    # predictions into PubTator lose their scores, and are told so
    pred = tmp_path / "pred.jsonl"
    doc = Document("1", "fever", (Link(0, 5, "fever", ("D1",), score=0.5),))
    write_documents(pred, [doc])
    with caplog.at_level(logging.WARNING, logger="xlnel.corpus.convert"):
        convert(pred, tmp_path / "pred.pubtator")
    assert "1 of the 1 mentions" in caplog.text
    # the input is never the output; a failed read leaves no output
    result = runner.invoke(app, ["convert", str(jsonl), str(jsonl)])
    assert result.exit_code != 0 and "is the input" in str(result.exception)
    bad = _write(tmp_path, SAMPLE.replace("<id>2</id>", ""), "bad.xml")
    with pytest.raises(FormatError, match="document without an <id>"):
        convert(bad, tmp_path / "bad.jsonl")
    assert not (tmp_path / "bad.jsonl").exists()


@pytest.mark.parametrize("doc_id", ["", " d", "d\x01"])
def test_ids_a_reader_would_change_are_refused(tmp_path: Path, doc_id: str) -> None:
    with pytest.raises(ValueError, match="cannot be written to BioC"):
        write_bioc(tmp_path / "c.xml", [Document(doc_id, "text")])
    assert not (tmp_path / "c.xml").exists()


def test_standard_input_is_read_as_jsonl_unless_told(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app

    runner = CliRunner()
    bioc = _write(tmp_path, SAMPLE)
    jsonl = tmp_path / "c.jsonl"
    write_documents(jsonl, read_documents(bioc))
    for stdin, extra in ((jsonl, []), (bioc, ["--from", "bioc"])):
        out = tmp_path / "from-stdin.xml"
        result = runner.invoke(app, ["convert", "-", str(out), *extra],
                               input=stdin.read_bytes())
        assert result.exit_code == 0, result.output
        assert read_documents(out) == read_documents(bioc)
    result = runner.invoke(app, ["evaluate", str(bioc), "-", "--no-ci", "--json"],
                           input=jsonl.read_bytes())
    assert result.exit_code == 0, result.output
    assert '"f1": 1.0' in result.stdout
    result = runner.invoke(app, ["evaluate", "-", "-"], input=jsonl.read_bytes())
    assert result.exit_code != 0 and "only one of GOLD, PRED" in result.output
    result = runner.invoke(app, ["convert", "-", str(tmp_path / "x.jsonl")],
                           input=bioc.read_bytes())
    assert "-:1: invalid JSON" in str(result.exception)
    assert "the standard input is read as JSONL" in str(result.exception)
    result = runner.invoke(app, ["convert", "-", str(tmp_path / "x.jsonl"), "--from", "brat"],
                           input=b"")
    assert "standard input cannot be" in str(result.exception)


EMPTY_ABSTRACT = """<collection><source>PubTator</source><date>2025</date><key>BioC.key</key>
<document><id>7</id>
<passage><infon key="type">title</infon><offset>0</offset><text>Lithium toxicity.</text>
<annotation id="0"><infon key="type">Chemical</infon><infon key="identifier">MESH:D008094</infon>
<location offset="0" length="7"/><text>Lithium</text></annotation></passage>
<passage><infon key="type">abstract</infon><offset>18</offset><text></text></passage>
</document></collection>
"""


@pytest.mark.parametrize("name", ["c.xml", "c.bioc.json"])
def test_a_title_with_an_empty_abstract_keeps_its_text_title_and_passages(
        tmp_path: Path, name: str) -> None:
    source = _write(tmp_path, EMPTY_ABSTRACT, "source.xml")
    if name != "c.xml":  # the same document as BioC JSON
        write_documents(tmp_path / name, read_documents(source))
        source = tmp_path / name
    (doc,) = read_documents(source)
    # no space after the title for the empty abstract: the text PubTator's lines give
    assert (doc.text, doc.metadata["title"]) == ("Lithium toxicity.", "Lithium toxicity.")
    assert doc.entities == (Link(0, 7, "Lithium", ("D008094",), "Chemical"),)
    write_documents(tmp_path / f"again.{name}", [doc])
    assert read_documents(tmp_path / f"again.{name}") == [doc]
    write_pubtator(tmp_path / "c.pubtator", [doc])
    assert (tmp_path / "c.pubtator").read_text(encoding="utf-8") == (
        "7|t|Lithium toxicity.\n7|a|\n7\t0\t7\tLithium\tChemical\tD008094\n\n")
    (from_pubtator,) = read_documents(tmp_path / "c.pubtator")
    write_documents(tmp_path / f"back.{name}", [from_pubtator])
    (back,) = read_documents(tmp_path / f"back.{name}")
    # PubTator's title and empty abstract come back as a title and an empty abstract passage
    assert (back.text, back.entities, back.metadata["title"]) == (
        doc.text, doc.entities, doc.metadata["title"])
    assert back.metadata["bioc_passages"] == doc.metadata["bioc_passages"] == [
        {"offset": 0, "length": 17, "infons": {"type": "title"}},
        {"offset": 18, "length": 0, "infons": {"type": "abstract"}}]


def test_empty_passages_between_others_keep_the_offsets(tmp_path: Path) -> None:
    content = ("<collection><document><id>1</id>"
               "<passage><offset>0</offset><text>ab</text></passage>"
               "<passage><offset>3</offset><text></text></passage>"
               "<passage><offset>5</offset><text>cd</text>"
               '<annotation id="0"><location offset="5" length="2"/><text>cd</text></annotation>'
               "</passage><passage><offset>4</offset><text>x</text></passage>"
               "</document></collection>")
    with pytest.raises(FormatError, match="passage at offset 4 overlaps the text before it, "
                                          "which ends at 7"):
        read_bioc(_write(tmp_path, content))
    (doc,) = read_bioc(_write(tmp_path, content.replace(
        "<passage><offset>4</offset><text>x</text></passage>", "")))
    assert doc.text == "ab   cd" and doc.entities == (Link(5, 7, "cd"),)
    content = content.replace("<offset>5</offset><text>cd", "<offset>2</offset><text>cd")
    with pytest.raises(FormatError, match="passage at offset 2 overlaps the text before it, "
                                          "which ends at 3"):
        read_bioc(_write(tmp_path, content))


@pytest.mark.parametrize("content", ["", " \n\n"])
def test_an_empty_file_is_named_as_such(tmp_path: Path, content: str) -> None:
    with pytest.raises(FormatError, match="the file is empty or blank, with no BioC <collection>"):
        read_bioc(_write(tmp_path, content))


def test_an_infon_given_twice_with_two_values_is_refused(tmp_path: Path) -> None:
    content = ("<collection><document><id>1</id><passage><offset>0</offset><text>ab</text>\n"
               '<annotation id="0"><infon key="identifier">D1</infon>\n'
               '<infon key="identifier">D2</infon><location offset="0" length="2"/></annotation>'
               "</passage></document></collection>")
    with pytest.raises(FormatError, match=r":3: infon 'identifier' given twice in one "
                                          r"<annotation>, as 'D1' and 'D2'"):
        read_bioc(_write(tmp_path, content))
    (doc,) = read_bioc(_write(tmp_path, content.replace(">D2<", ">D1<")))  # the same: harmless
    assert doc.entities == (Link(0, 2, "ab", ("D1",)),)


def test_a_passage_with_an_empty_text_element_is_read_from_its_sentences(tmp_path: Path) -> None:
    content = ("<collection><document><id>1</id><passage><offset>0</offset><text></text>"
               "<sentence><offset>0</offset><text>Fever.</text>"
               '<annotation id="0"><location offset="0" length="5"/><text>Fever</text>'
               "</annotation></sentence><sentence><offset>7</offset><text>Cough.</text>"
               "</sentence></passage></document></collection>")
    # as BioC JSON's "text": "" beside sentences is: the sentences are the passage's text
    (doc,) = read_bioc(_write(tmp_path, content))
    assert (doc.text, doc.entities) == ("Fever. Cough.", (Link(0, 5, "Fever"),))


def test_offsets_counting_a_literal_cr_say_that_xml_reads_it_as_lf(tmp_path: Path) -> None:
    # the offsets count "\r\n" as two characters; the parser reads it as one "\n"
    path = tmp_path / "crlf.xml"
    path.write_bytes(b"<collection><document><id>1</id><passage><offset>0</offset>"
                     b"<text>one\r\nfever</text><annotation id='0'>"
                     b"<location offset='5' length='5'/><text>fever</text></annotation>"
                     b"</passage></document></collection>")
    with pytest.raises(FormatError, match=r"beyond the text \(9 characters\); the file holds "
                                          r"carriage returns.*XML 1\.0 section 2\.11"):
        read_bioc(path)
    path.write_bytes(path.read_bytes().replace(b"fever</text><ann", b"fever now</text><ann"))
    with pytest.raises(FormatError, match=r"differs from the text.*carriage returns"):
        read_bioc(path)
    path.write_bytes(path.read_bytes().replace(b"\r", b""))
    with pytest.raises(FormatError, match="differs from the text") as error:
        read_bioc(path)
    assert "carriage returns" not in str(error.value)  # no CR in the file: no hint
