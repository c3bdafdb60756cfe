"""The linking service: a FastAPI app around one loaded pipeline.

Routes: ``POST /link``, ``POST /link/bioc`` (BioC JSON in and out), ``GET /concepts/{id}``,
``GET /health``, ``GET /metadata``, the web page at ``/`` (static files shipped in
``xlnel/serve/static``) and FastAPI's ``/openapi.json`` and ``/docs``. The pipeline is loaded
once, when the app is created; requests link under a lock, so concurrent requests are safe
whatever the pipeline's parts do with shared state (more throughput comes from more worker
processes, ``xlnel serve --workers N``); concept lookups do not wait for it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from xlnel.errors import FormatError, LimitError
from xlnel.io.bioc_json import InvalidJSONError, bioc_json_text, parse_bioc_json
from xlnel.io.jsonl import document_to_dict, lone_surrogate
from xlnel.io.kb_history import kb_ids_history
from xlnel.runtime import Pipeline
from xlnel.serve.schemas import (
    BatchOut,
    ConceptOut,
    DocumentOut,
    ErrorOut,
    LinkRequest,
)
from xlnel.types import Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
#: Environment variables read by :func:`app_from_env` (set by :func:`xlnel.serve.serve`).
ENV_PIPELINE, ENV_LIMITS = "XLNEL_SERVE_PIPELINE", "XLNEL_SERVE_LIMITS"
#: Load-time config overrides of the served pipeline, as a JSON object (``xlnel serve --set``).
ENV_OVERRIDES = "XLNEL_SERVE_OVERRIDES"


@dataclass(frozen=True)
class Limits:
    """Request limits: beyond them the service answers 413 with the limit in the message.

    Attributes:
        max_text_chars: Characters of one text.
        max_batch: Texts or documents in one request.
        max_body_bytes: Bytes of a request body.
    """

    max_text_chars: int = 100_000
    max_batch: int = 64
    max_body_bytes: int = 2_000_000

    def encode(self) -> str:
        """``chars,batch,bytes``, for :data:`ENV_LIMITS`."""
        return f"{self.max_text_chars},{self.max_batch},{self.max_body_bytes}"

    @classmethod
    def decode(cls, value: str) -> Limits:
        """The inverse of :meth:`encode`."""
        chars, batch, body = (int(v) for v in value.split(","))
        return cls(chars, batch, body)


class _Linker:
    """The pipeline, a lock around linking, and an index of each concept's dictionary names.

    The names index and the retired-id history are built once, on first use, under a lock of
    their own: they only read what loading fixed (the dictionary, the config), so a concept
    lookup never waits for a long link request, nor a link for the history's KB files.
    """

    def __init__(self, pipeline: Pipeline, folder: str) -> None:
        self.pipeline, self.folder = pipeline, folder
        self.lock = threading.Lock()
        self._index_lock = threading.Lock()
        self._names: dict[str, list[str]] | None = None
        self._retired: dict[str, str] | None = None

    def link(self, documents: list[Document]) -> list[Document]:
        with self.lock:
            return self.pipeline.link_batch(documents)

    def names_of(self, concept_id: str) -> list[str]:
        with self._index_lock:
            if self._names is None:  # built on first use: most services never ask
                index: dict[str, list[str]] = {}
                entries = sorted(self.pipeline.dictionary, key=lambda e: e.source != "kb")
                for entry in entries:
                    index.setdefault(entry.concept_id, []).append(entry.name)
                self._names = index
        return self._names.get(concept_id, [])

    def current_id(self, concept_id: str) -> str | None:
        """The id that replaced a retired one in the pipeline's knowledge bases, if any."""
        with self._index_lock:
            if self._retired is None:  # read on first use, from the KB files still there
                self._retired = kb_ids_history(self.pipeline.config.dictionary.kb,
                                               missing_ok=True)
        return self._retired.get(concept_id)


def create_app(pipeline: Pipeline | str | Path, limits: Limits | None = None,
               overrides: Mapping[str, Any] | None = None) -> FastAPI:
    """The service for a loaded pipeline, a pipeline folder or ``"default"``.

    Args:
        pipeline: The pipeline, loaded once here when a folder or name is given.
        limits: Request limits; :class:`Limits` defaults when ``None``.
        overrides: Config keys changed when a folder or name is loaded, as ``xlnel link
            --set`` takes them (``{"linker.alternatives": 3}``).

    Returns:
        The FastAPI app (serve it with uvicorn, or test it with ``TestClient``).
    """
    import xlnel

    limits = Limits() if limits is None else limits
    folder = "<in memory>" if isinstance(pipeline, Pipeline) else str(pipeline)
    pipe = pipeline if isinstance(pipeline, Pipeline) else xlnel.load(pipeline, overrides)
    linker = _Linker(pipe, folder)
    app = FastAPI(title="xlnel", version=__version__,
                  description="Cross-lingual biomedical entity linking: find mentions of "
                              "knowledge-base concepts in a text and link them.")
    _add_error_handlers(app, limits)
    _add_routes(app, linker, limits)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    logger.info("serving pipeline %s (lang %s)", folder, pipe.config.lang)
    return app


def app_from_env() -> FastAPI:
    """The app for the pipeline folder in :data:`ENV_PIPELINE`: the factory each uvicorn worker
    process calls, so each loads the pipeline once.

    Raises:
        RuntimeError: When the variable is not set.
    """
    folder = os.environ.get(ENV_PIPELINE)
    if not folder:
        raise RuntimeError(f"{ENV_PIPELINE} is not set; start the service with `xlnel serve`")
    limits = os.environ.get(ENV_LIMITS)
    overrides = json.loads(os.environ.get(ENV_OVERRIDES) or "{}")
    return create_app(folder, Limits.decode(limits) if limits else None, overrides)


def _add_error_handlers(app: FastAPI, limits: Limits) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return JSONResponse({"detail": "the request body is not valid JSON: "
                                 + "; ".join(str(e.get("ctx", {}).get("error", e.get("msg")))
                                             for e in errors)}, status_code=400)
        if any(tuple(e.get("loc", ())) == ("body",) and e.get("type") == "missing"
               for e in errors):
            return JSONResponse({"detail": "the request body is empty: send a JSON object"},
                                status_code=400)
        kind = request.headers.get("content-type", "")
        if not _is_json(kind) and any(tuple(e.get("loc", ())) == ("body",) for e in errors):
            # FastAPI reads a body as JSON only when its content type says so (``curl -d``
            # sends form data): say which header is missing, not that the body is no object.
            got = repr(kind) if kind else "none"
            return JSONResponse({"detail": "the request body must be JSON sent with the header "
                                 f"content-type: application/json (got {got})"}, status_code=422)
        return JSONResponse({"detail": _plain(errors)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        cause = exc.__cause__
        if isinstance(cause, UnicodeDecodeError):  # FastAPI's "error parsing the body"
            return JSONResponse({"detail": "the request body is not valid JSON: it is not UTF-8 "
                                 f"({cause.reason} at byte {cause.start})"}, status_code=400)
        return await http_exception_handler(request, exc)

    app.add_middleware(_BodyLimit, max_bytes=limits.max_body_bytes)


def _is_json(content_type: str) -> bool:
    """Whether a content type is one FastAPI parses as JSON (``application/json``, ``+json``)."""
    kind = content_type.split(";")[0].strip().lower()
    return kind == "application/json" or (kind.startswith("application/")
                                          and kind.endswith("+json"))


class _BodyLimit:
    """Answers 413 to a body over ``max_bytes``: at once when its ``Content-Length`` says so,
    else (chunked transfer) as soon as the bytes received pass the limit, without reading on."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        size = dict(scope["headers"]).get(b"content-length", b"").decode("latin-1")
        if size.isdigit() and int(size) > self.max_bytes:
            answer = JSONResponse({"detail": f"request body of {size} bytes is over the limit "
                                   f"of {self.max_bytes} bytes"}, status_code=413)
            await answer(scope, receive, send)
            return
        received = 0

        async def counted() -> Any:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:  # raised inside the route: answered as 413
                    raise HTTPException(413, f"request body of more than {self.max_bytes} "
                                             f"bytes is over the limit of {self.max_bytes} bytes")
            return message

        await self.app(scope, counted, send)


def _plain(errors: Any) -> list[dict[str, Any]]:
    """Validation errors without the echoed input (which may be a whole text)."""
    return [{"loc": list(e.get("loc", ())), "msg": e.get("msg"), "type": e.get("type")}
            for e in errors]


def _documents(request: LinkRequest, limits: Limits) -> tuple[list[Document], bool]:
    """The request's documents, and whether it was a single text; raises 413/422."""
    given = [k for k in ("text", "texts", "documents") if getattr(request, k) is not None]
    if len(given) != 1:
        raise HTTPException(422, "give exactly one of 'text', 'texts' or 'documents' "
                                 f"(got {given or 'none'})")
    if request.text is not None:
        docs = [Document("text-0", request.text)]
    elif request.texts is not None:
        docs = [Document(f"text-{i}", t) for i, t in enumerate(request.texts)]
    else:
        assert request.documents is not None
        docs = [Document(d.id or f"text-{i}", d.text, metadata=dict(d.model_extra or {}))
                for i, d in enumerate(request.documents)]
    _check_limits(docs, limits)
    _check_ids(docs)
    return docs, request.text is not None


def _check_ids(docs: list[Document]) -> None:
    """Refuse (422) a batch in which two documents have one id, as the corpus readers do:
    the answers could not be told apart by id (a missing id stands as ``text-N``)."""
    seen: dict[str, int] = {}
    for i, doc in enumerate(docs):
        if doc.id in seen:
            raise HTTPException(422, f"document {i} has the id {doc.id!r} of document "
                                     f"{seen[doc.id]}; ids in a batch must be unique")
        seen[doc.id] = i


def _check_limits(docs: list[Document], limits: Limits) -> None:
    """Refuse a batch or a text over the limits (413) and text that is not Unicode (422)."""
    if len(docs) > limits.max_batch:
        raise HTTPException(413, f"batch of {len(docs)} texts is over the limit of "
                                 f"{limits.max_batch}; split it into smaller requests")
    for i, doc in enumerate(docs):
        if len(doc.text) > limits.max_text_chars:
            raise HTTPException(413, f"text {i} has {len(doc.text)} characters, over the limit "
                                     f"of {limits.max_text_chars}; split it")
        for what, value in (("id", doc.id), ("text", doc.text), ("fields", doc.metadata)):
            _check_unicode(value, f"document {i} {what}")


def _check_unicode(value: Any, where: str) -> None:
    """Refuse (422) a string holding a lone surrogate (JSON's ``\\ud800`` escape decodes to one):
    it is no character, and no answer could encode it."""
    found = lone_surrogate(value, where)
    if found is not None:
        raise HTTPException(422, f"{found}: not Unicode text")


def _bioc_documents(body: bytes, limits: Limits) -> list[Document]:
    """The documents of a BioC JSON request body; raises 400/413/422."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HTTPException(400, f"the body is not UTF-8 ({exc.reason} at byte {exc.start})"
                            ) from None
    try:  # limits checked while parsing: passage offsets must not make huge texts first
        docs = parse_bioc_json(text, max_documents=limits.max_batch,
                               max_chars=limits.max_text_chars)
    except FormatError as exc:  # 400 for JSON syntax, as /link answers; 422 for BioC faults
        status = 413 if isinstance(exc, LimitError) else (
            400 if isinstance(exc, InvalidJSONError) else 422)
        raise HTTPException(status, str(exc)) from None
    _check_limits(docs, limits)
    return docs


def _add_routes(app: FastAPI, linker: _Linker, limits: Limits) -> None:
    errors: dict[int | str, dict[str, Any]] = {
        code: {"model": ErrorOut} for code in (400, 413, 422)}

    @app.post("/link", response_model=DocumentOut | BatchOut, responses=errors,
              summary="Link one text or a batch")
    def link(request: LinkRequest) -> JSONResponse:
        """Link ``text`` (answer: one document) or ``texts`` / ``documents`` (answer:
        ``{"documents": [...]}``), each document as a line of ``xlnel link``'s JSONL output."""
        docs, single = _documents(request, limits)
        try:
            linked = linker.link(docs)
            out = [document_to_dict(d) for d in linked]
        except ValueError as exc:  # metadata keys clashing with the JSONL keys
            raise HTTPException(422, str(exc)) from None
        # As the JSONL writer writes them: metadata keys kept even when null.
        return JSONResponse(out[0] if single else {"documents": out})

    @app.post("/link/bioc", summary="Link BioC JSON documents",
              responses={200: {"content": {"application/json": {"schema": {"type": "object"}}},
                               "description": "A BioC JSON collection"}, **errors},
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": {"oneOf": [
                      {"type": "object"}, {"type": "array", "items": {"type": "object"}}]}}}}})
    async def link_bioc(request: Request) -> Response:
        """Link BioC JSON documents (a collection, PubTator3's ``{"PubTator3": [...]}``, a list
        or one document): the answer is a BioC JSON collection of the same documents, their
        passages, infons and fields kept, the links as annotations (their infons as
        ``xlnel link`` writes them)."""
        docs = await run_in_threadpool(_bioc_documents, await request.body(), limits)
        linked = await run_in_threadpool(linker.link, docs)
        try:  # the text xlnel's BioC JSON files hold
            collection = "".join(bioc_json_text(linked))
        except ValueError as exc:
            raise HTTPException(422, str(exc)) from None
        return Response(collection, media_type="application/json")

    # ``:path``: ids may hold "/" (sent as is or as %2F), which a plain parameter never matches.
    @app.get("/concepts/{concept_id:path}", response_model=ConceptOut,
             responses={301: {"description": "A retired id: moved to the current one"},
                        404: {"model": ErrorOut}},
             summary="A concept's names and type")
    def concept(concept_id: str) -> Any:
        info = linker.pipeline.concepts.get(concept_id)
        names = linker.names_of(concept_id)
        if info is None and not names:
            current = linker.current_id(concept_id)
            if current is not None:  # HPO alt_id / replaced_by, UMLS merge
                return RedirectResponse(f"/concepts/{quote(current, safe=':')}", 301)
            raise HTTPException(404, f"concept {concept_id!r} is not in the pipeline")
        return ConceptOut(id=concept_id, name=info.name if info else names[0],
                          type=info.type if info else None, names=names)

    @app.get("/health", summary="Liveness")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/metadata", summary="Pipeline config, version, languages, limits")
    def metadata() -> dict[str, Any]:
        config = linker.pipeline.config
        return {"xlnel_version": __version__, "pipeline": linker.folder,
                "languages": [config.lang], "knowledge_bases": list(config.dictionary.kb),
                "concepts": len(linker.pipeline.concepts),
                "limits": {"max_text_chars": limits.max_text_chars,
                           "max_batch": limits.max_batch,
                           "max_body_bytes": limits.max_body_bytes},
                "config": config.model_dump(mode="json")}

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html")
