"""The linking service through FastAPI's TestClient: answers, limits and bad requests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402

import xlnel  # noqa: E402
from xlnel.io.jsonl import document_to_dict  # noqa: E402
from xlnel.serve.app import Limits, create_app  # noqa: E402
from xlnel.types import Document  # noqa: E402

TEXT = "She has diabetes and high blood pressure."


@pytest.fixture(scope="module")
def client(en_pipeline: Path) -> TestClient:
    return TestClient(create_app(en_pipeline, Limits(max_text_chars=200, max_batch=3,
                                                     max_body_bytes=5000)))


def test_link_one_text_as_the_jsonl_output(client: TestClient, en_pipeline: Path) -> None:
    r = client.post("/link", json={"text": TEXT})
    assert r.status_code == 200
    expected = document_to_dict(xlnel.load(en_pipeline).link(Document("text-0", TEXT)))
    assert r.json() == json.loads(json.dumps(expected))
    first = r.json()["entities"][0]
    assert (first["text"], first["concept_id"], first["concept_name"], first["concept_type"],
            first["matched_source"]) == ("diabetes", "C1", "diabetes mellitus", "Disorder", "kb")


def test_link_a_batch_of_texts_and_documents(client: TestClient) -> None:
    r = client.post("/link", json={"texts": [TEXT, "Nothing here."]})
    assert [d["id"] for d in r.json()["documents"]] == ["text-0", "text-1"]
    assert r.json()["documents"][1]["entities"] == []
    r = client.post("/link", json={"documents": [{"id": "p1", "text": "asthma", "site": "x"}]})
    doc = r.json()["documents"][0]
    assert (doc["id"], doc["site"], doc["entities"][0]["concept_id"]) == ("p1", "x", "C4")


@pytest.mark.parametrize("body, status, words", [
    ({"text": "x" * 201}, 413, "201 characters, over the limit of 200"),
    ({"texts": ["a"] * 4}, 413, "batch of 4 texts is over the limit of 3"),
    ({"text": 5}, 422, "string"),
    ({"texts": "one"}, 422, "list"),
    ({"text": "a", "texts": ["b"]}, 422, "exactly one of"),
    ({}, 422, "exactly one of"),
    ({"txt": "a"}, 422, "txt"),
    ({"documents": [{"id": "d", "text": "a", "entities": []}]}, 422, "clash"),
    ([1, 2], 422, "valid dictionary"),
])
def test_bad_requests_are_refused_clearly(client: TestClient, body: object, status: int,
                                          words: str) -> None:
    r = client.post("/link", json=body)
    assert r.status_code == status
    assert words in json.dumps(r.json())


def test_malformed_json_is_400(client: TestClient) -> None:
    for raw in (b"{not json", b'{"text": "a"', b"\xff\xfe"):
        r = client.post("/link", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 400, raw
        assert "not valid JSON" in r.json()["detail"]
    r = client.post("/link", content=b"", headers={"content-type": "application/json"})
    assert r.status_code == 400 and "empty" in r.json()["detail"]


def test_a_body_that_is_not_utf8_is_400_naming_the_byte(client: TestClient) -> None:
    raw = '{"text": "café asthma"}'.encode("latin-1")
    r = client.post("/link", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["detail"] == ("the request body is not valid JSON: it is not UTF-8 "
                                  "(invalid continuation byte at byte 13)")


@pytest.mark.parametrize("headers, got", [({}, "none"),
                                          ({"content-type": "text/plain"}, "'text/plain'")])
def test_a_body_not_sent_as_json_names_the_header(client: TestClient, headers: dict[str, str],
                                                  got: str) -> None:
    r = client.post("/link", content=b'{"text": "asthma"}', headers=headers)
    assert r.status_code == 422
    assert r.json()["detail"] == ("the request body must be JSON sent with the header "
                                  f"content-type: application/json (got {got})")


@pytest.mark.parametrize("documents, detail", [
    ([{"id": "a", "text": "asthma"}, {"id": "a", "text": "migraine"}],
     "document 1 has the id 'a' of document 0; ids in a batch must be unique"),
    ([{"text": "asthma"}, {"id": "text-0", "text": "migraine"}],
     "document 1 has the id 'text-0' of document 0; ids in a batch must be unique"),
])
def test_a_batch_repeating_an_id_is_422(client: TestClient, documents: list[dict[str, str]],
                                        detail: str) -> None:
    r = client.post("/link", json={"documents": documents})
    assert r.status_code == 422 and r.json()["detail"] == detail


def test_oversized_body_is_413(client: TestClient) -> None:
    r = client.post("/link", content=b'{"text": "' + b"a" * 6000 + b'"}',
                    headers={"content-type": "application/json"})
    assert r.status_code == 413 and "5000 bytes" in r.json()["detail"]


def test_a_chunked_body_over_the_limit_is_413(client: TestClient) -> None:
    def chunks() -> object:  # no Content-Length: the bytes are counted as they come
        yield b'{"text": "'
        for _ in range(10):
            yield b"a" * 1000
        yield b'"}'

    for path in ("/link", "/link/bioc"):
        r = client.post(path, content=chunks(), headers={"content-type": "application/json"})
        assert r.status_code == 413, r.text
        assert "more than 5000 bytes" in r.json()["detail"]


@pytest.mark.parametrize("body, where", [
    ({"text": "\ud800 asthma"}, "document 0 text holds the lone surrogate"),
    ({"texts": ["asthma", "x \udfff"]}, "document 1 text"),
    ({"documents": [{"id": "\ud800", "text": "asthma"}]}, "unicode string"),  # pydantic's
    ({"documents": [{"id": "a", "text": "asthma", "note": ["\ud800"]}]}, "'note'"),
])
def test_lone_surrogates_are_422_not_500(client: TestClient, body: object, where: str) -> None:
    raw = json.dumps(body).encode()  # ensure_ascii: the surrogate travels as \ud800
    r = client.post("/link", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert where in json.dumps(r.json())


def test_document_fields_come_back_even_when_null(client: TestClient) -> None:
    r = client.post("/link", json={"documents": [{"id": "a", "text": "xyz", "note": None,
                                                  "keep": 1}]})
    assert r.json()["documents"][0] == {"id": "a", "note": None, "keep": 1, "text": "xyz",
                                        "entities": []}
    assert client.post("/link", json={"documents": [{"id": "", "text": "x"}]}
                       ).status_code == 422


def test_link_bioc_json_documents(client: TestClient) -> None:
    export = {"PubTator3": [{"id": "123", "pmid": 123, "infons": {}, "passages": [
        {"offset": 0, "infons": {"type": "title"}, "text": "Asthma."},
        {"offset": 8, "infons": {"type": "abstract"}, "text": TEXT,
         "annotations": [{"id": "1", "infons": {"type": "Disease", "identifier": "MESH:D1"},
                          "text": "diabetes", "locations": [{"offset": 16, "length": 8}]}]}],
        "relations": []}]}
    r = client.post("/link/bioc", json=export)
    assert r.status_code == 200, r.text
    (doc,) = r.json()["documents"]
    assert (doc["id"], doc["pmid"]) == ("123", 123)
    assert [p["text"] for p in doc["passages"]] == ["Asthma.", TEXT]
    found = [(a["text"], a["infons"]["identifier"], a["locations"])
             for p in doc["passages"] for a in p["annotations"]]
    assert found[:2] == [("Asthma", "C4", [{"offset": 0, "length": 6}]),
                         ("diabetes", "C1", [{"offset": 16, "length": 8}])]
    body = client.get("/openapi.json").json()["paths"]["/link/bioc"]["post"]["requestBody"]
    shapes = body["content"]["application/json"]["schema"]["oneOf"]
    assert [shape["type"] for shape in shapes] == ["object", "array"]


@pytest.mark.parametrize("raw, status, words", [
    (b'{"documents": [', 400, "<request>:1: not valid JSON"),
    (b"\xff", 400, "not UTF-8"),
    (b'{"documents": [{"id": "a", "passages": [{"text": "x"}]}]}', 422,
     'passage without an \\"offset\\"'),
    (b'{"text": "a"}', 422, "jsonl"),
    (json.dumps([{"id": str(i), "passages": [{"offset": 0, "text": "a"}]}
                 for i in range(4)]).encode(), 413, "more than 3 documents, the limit"),
    # a passage offset far out: refused before the gap is filled with spaces
    (json.dumps({"id": "a", "passages": [{"offset": 10**8, "text": "x"}]}).encode(), 413,
     "100000001 characters long, over the limit of 200"),
    (b"nope", 400, "found 'nope'"),
    (b"42", 422, "found '42'"),
    (b'{"id": "a", "passages": [{"offset": 0, "text": "\\ud800 x"}]}', 422,
     "lone surrogate"),
    (json.dumps({"id": "a", "passages": [{"offset": 0, "text": "x" * 201}]}).encode(), 413,
     "201 characters"),
])
def test_bad_bioc_requests_are_refused_clearly(client: TestClient, raw: bytes, status: int,
                                               words: str) -> None:
    r = client.post("/link/bioc", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == status, r.text
    assert words in json.dumps(r.json())


def test_concepts_health_metadata_openapi(client: TestClient) -> None:
    r = client.get("/concepts/C2")
    assert r.json() == {"id": "C2", "name": "hypertension", "type": "Disorder",
                        "names": ["hypertension", "high blood pressure"]}
    assert client.get("/concepts/NOPE").status_code == 404
    assert client.get("/health").json() == {"status": "ok"}
    meta = client.get("/metadata").json()
    assert meta["languages"] == ["en"] and meta["xlnel_version"] == xlnel.__version__
    assert meta["config"]["filter"]["name"] == "xlnel.similarity.v1"
    assert meta["limits"]["max_batch"] == 3
    schema = client.get("/openapi.json").json()
    assert {"/link", "/concepts/{concept_id}", "/health", "/metadata"} <= set(schema["paths"])


def test_a_retired_concept_id_moves_to_the_current_one(en_pipeline: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import xlnel.serve.app as app_module

    asked: list[object] = []

    def history(specs: object, missing_ok: bool = False) -> dict[str, str]:
        asked.append(specs)
        return {"HP:7": "C2"}

    monkeypatch.setattr(app_module, "kb_ids_history", history)
    client = TestClient(create_app(en_pipeline))
    r = client.get("/concepts/HP:7", follow_redirects=False)
    assert r.status_code == 301 and r.headers["location"] == "/concepts/C2"
    assert client.get("/concepts/HP:7").json()["id"] == "C2"
    assert client.get("/concepts/HP:8").status_code == 404
    assert len(asked) == 1  # the history is read once, on the first unknown id


def test_concept_ids_holding_a_slash_are_found(en_pipeline: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import xlnel.serve.app as app_module
    from xlnel.dictionary.concepts import ConceptInfo, ConceptTable

    pipeline = xlnel.load(en_pipeline)
    pipeline.concepts = ConceptTable([ConceptInfo("MESH/D003920", "Diabetes", "Disease")])
    monkeypatch.setattr(app_module, "kb_ids_history",
                        lambda specs, missing_ok=False: {"OLD/1": "MESH/D003920"})
    client = TestClient(create_app(pipeline))
    expected = {"id": "MESH/D003920", "name": "Diabetes", "type": "Disease", "names": []}
    for path in ("/concepts/MESH/D003920", "/concepts/MESH%2FD003920"):
        assert client.get(path).json() == expected, path
    r = client.get("/concepts/OLD/1", follow_redirects=False)
    assert r.status_code == 301 and r.headers["location"] == "/concepts/MESH%2FD003920"
    assert client.get("/concepts/OLD/1").json() == expected
    r = client.get("/concepts/NO/SUCH")
    assert r.status_code == 404
    assert r.json() == {"detail": "concept 'NO/SUCH' is not in the pipeline"}
    assert "/concepts/{concept_id}" in client.get("/openapi.json").json()["paths"]


def test_web_page_and_its_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'dir="auto"' in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert "http" not in page.text.replace("http-equiv", "")  # nothing fetched from elsewhere


def test_concurrent_requests_get_their_own_answers(client: TestClient) -> None:
    texts = ["asthma", "migraine", "insulin", "metformin"] * 5

    def one(text: str) -> str:
        return client.post("/link", json={"text": text}).json()["entities"][0]["text"]

    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(one, texts)) == texts


def test_a_concept_lookup_does_not_wait_for_a_link(en_pipeline: Path) -> None:
    import threading

    pipe = xlnel.load(en_pipeline)
    entered, release = threading.Event(), threading.Event()
    link_batch = pipe.link_batch

    def slow(documents: Sequence[Document]) -> list[Document]:
        entered.set()
        release.wait(30)
        return link_batch(documents)

    pipe.link_batch = slow  # type: ignore[method-assign]
    client = TestClient(create_app(pipe))
    with ThreadPoolExecutor(2) as pool:
        linking = pool.submit(client.post, "/link", json={"text": "asthma"})
        assert entered.wait(30)
        lookup = pool.submit(client.get, "/concepts/HP:404")  # builds both lazy indexes
        try:
            assert lookup.result(timeout=20).status_code == 404
            assert client.get("/concepts/C2").json()["id"] == "C2"
        finally:
            release.set()
        assert linking.result(timeout=30).json()["entities"][0]["text"] == "asthma"


def test_serve_refuses_a_folder_that_is_no_pipeline(tmp_path: Path) -> None:
    from xlnel.errors import ArtifactError
    from xlnel.serve import serve

    with pytest.raises(ArtifactError, match="no config.yaml"):
        serve(tmp_path)


def test_limits_round_trip_through_the_environment() -> None:
    limits = Limits(10, 2, 300)
    assert Limits.decode(limits.encode()) == limits


def test_cli_link_writes_the_found_fields_and_serve_has_help(en_pipeline: Path,
                                                             tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from xlnel.cli.main import app

    runner = CliRunner()
    out = tmp_path / "o.jsonl"
    r = runner.invoke(app, ["link", str(en_pipeline), "--text", TEXT, "--out", str(out)])
    assert r.exit_code == 0, r.output
    entity = json.loads(out.read_text(encoding="utf-8"))["entities"][0]
    assert {k: entity[k] for k in ("concept_name", "concept_type", "matched_name")} == {
        "concept_name": "diabetes mellitus", "concept_type": "Disorder",
        "matched_name": "diabetes"}
    r = runner.invoke(app, ["link", str(en_pipeline), "--text", TEXT])
    assert r.stdout.splitlines()[0].split("\t")[:5] == ["8", "16", "diabetes", "C1",
                                                        "diabetes mellitus"]
    r = runner.invoke(app, ["serve", "--help"])
    assert r.exit_code == 0 and "--workers" in r.stdout


def test_overrides_reach_every_worker_and_bad_ones_fail_first(
        en_pipeline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from xlnel.errors import ConfigError
    from xlnel.serve import serve
    from xlnel.serve.app import ENV_OVERRIDES, ENV_PIPELINE, app_from_env

    monkeypatch.setenv(ENV_PIPELINE, str(en_pipeline))
    monkeypatch.setenv(ENV_OVERRIDES, json.dumps({"linker.alternatives": 3}))
    client = TestClient(app_from_env())
    assert client.get("/metadata").json()["config"]["linker"]["alternatives"] == 3
    assert client.post("/link", json={"text": TEXT}).status_code == 200
    with pytest.raises(ConfigError, match="dictionary"):
        serve(en_pipeline, overrides={"dictionary.kb": []})


def test_alternatives_are_in_the_schema() -> None:
    from xlnel.io.jsonl import entity_to_dict
    from xlnel.serve.schemas import EntityOut
    from xlnel.types import Link

    link = Link(0, 5, "fever", ("C1",), score=0.9, alternatives=(("C2", 0.4, 0.7),))
    out = EntityOut.model_validate(entity_to_dict(link))
    assert out.alternatives is not None
    assert [(a.concept_id, a.score, a.similarity) for a in out.alternatives] == [
        ("C2", 0.4, 0.7)]
