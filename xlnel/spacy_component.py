"""A spaCy pipeline component that links with an xlnel pipeline (extra ``xlnel[spacy]``).

    >>> import spacy, xlnel.spacy_component  # doctest: +SKIP
    >>> nlp = spacy.blank("en")  # doctest: +SKIP
    >>> nlp.add_pipe("xlnel_linker", config={"pipeline": "default"})  # doctest: +SKIP
    >>> [(e.text, e.kb_id_) for e in nlp("She had seizures.").ents]  # doctest: +SKIP
    [('seizures', 'HP:0001250')]

Each link becomes a span with ``kb_id_`` = the concept id and ``span._.xlnel`` = a dict of the
link's score, concept name and type, the matched dictionary name and its source, and the
link's exact character offsets. The spans go to ``doc.ents`` when they do not overlap and the
doc has no entities yet (``target="auto"``), otherwise to ``doc.spans["xlnel"]``.

Alignment: xlnel's offsets are characters, spaCy's spans are tokens. A link whose offsets fall
on token boundaries becomes exactly that span (``_.xlnel["alignment"] == "exact"``); one that
does not, such as a Hebrew mention after a one-letter prefix that the tokenizer leaves attached
(``בסוכרת``: xlnel links ``סוכרת``), becomes the smallest span of whole tokens covering it
(``alignment_mode="expand"``, recorded as ``"expand"``), and ``_.xlnel["start_char"]`` /
``["end_char"]`` keep xlnel's offsets. ``alignment_mode="strict"`` drops such links instead.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from spacy.language import Language
from spacy.tokens import Doc, Span
from spacy.util import filter_spans, minibatch

from xlnel.types import Link

if TYPE_CHECKING:
    from xlnel.runtime import Pipeline

logger = logging.getLogger(__name__)

__all__ = ["XlnelLinker", "make_linker"]

TARGETS = ("auto", "ents", "spans")
ALIGNMENTS = ("expand", "contract", "strict")
_REFERENCE = "xlnel_pipeline.json"

_LINK_KEY = "xlnel_link"


def _link_key(span: Span) -> tuple[str, int, int, str, str]:
    # spaCy keys a span's extension values by its offsets only; two links that widen to the
    # same tokens (``seizures;hypertension``) differ by label or concept id.
    return _LINK_KEY, span.start_char, span.end_char, span.label_, span.kb_id_


def _get_link(span: Span) -> dict[str, object] | None:
    user_data: dict[Any, Any] = span.doc.user_data
    value = user_data.get(_link_key(span))
    return value if isinstance(value, dict) else None


def _set_link(span: Span, value: dict[str, object] | None) -> None:
    user_data: dict[Any, Any] = span.doc.user_data
    user_data[_link_key(span)] = value


Span.set_extension("xlnel", getter=_get_link, setter=_set_link, force=True)


class XlnelLinker:
    """The ``xlnel_linker`` component; see the module docstring.

    Args:
        nlp: The spaCy pipeline (unused; spaCy passes it).
        name: The component's name.
        pipeline: ``"default"`` or an xlnel pipeline folder; loaded on first use.
        batch_size: Texts linked at once by ``nlp.pipe``.
        target: ``auto``, ``ents`` (overlapping spans are dropped, longest kept) or ``spans``.
        overwrite_ents: With ``target="ents"``, whether links replace entities already on the
            doc that they overlap (else those entities stay and the links are left out, as
            spaCy's ``entity_ruler`` does); entities they do not overlap always stay.
        spans_key: Key of ``doc.spans`` for the ``spans`` target.
        alignment_mode: For links off token boundaries: ``expand``, ``contract`` or
            ``strict`` (drop them).
        label: Span label; ``None`` uses the link's entity type (the training annotations'
            type, ``linker.entity_types``), else the concept's type, else ``CONCEPT``.
        alternatives: Up to this many other concepts proposed for each span, in
            ``span._.xlnel["alternatives"]`` as ``(concept_id, score, similarity)``, best first (the
            pipeline's ``linker.alternatives`` for this component; ``None`` keeps the
            pipeline's setting).

    Raises:
        ValueError: For an unknown target or alignment mode, or a batch size or number of
            alternatives below its minimum.
    """

    def __init__(self, nlp: Language | None, name: str, pipeline: str, batch_size: int = 64,
                 target: str = "auto", spans_key: str = "xlnel",
                 alignment_mode: str = "expand", label: str | None = None,
                 alternatives: int | None = None, overwrite_ents: bool = False) -> None:
        if target not in TARGETS:
            raise ValueError(f"target {target!r} is not one of {', '.join(TARGETS)}")
        if alignment_mode not in ALIGNMENTS:
            raise ValueError(f"alignment_mode {alignment_mode!r} is not one of "
                             f"{', '.join(ALIGNMENTS)}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if alternatives is not None and alternatives < 0:
            raise ValueError(f"alternatives must be 0 or more, got {alternatives}")
        self.name, self.pipeline_ref, self.batch_size = name, str(pipeline), batch_size
        self.target, self.spans_key = target, spans_key
        self.alignment_mode, self.label = alignment_mode, label
        self.alternatives, self.overwrite_ents = alternatives, overwrite_ents
        # The configured reference, which :meth:`to_disk` records beside the resolved one so
        # that :meth:`from_disk` can tell a reference changed in the config from the saved one.
        self._configured = self.pipeline_ref
        self._pipeline: Pipeline | None = None

    @property
    def pipeline(self) -> Pipeline:
        """The xlnel pipeline, loaded once on first use."""
        if self._pipeline is None:
            import xlnel

            overrides = ({} if self.alternatives is None
                         else {"linker.alternatives": self.alternatives})
            self._pipeline = xlnel.load(self.pipeline_ref, overrides)
        return self._pipeline

    def __call__(self, doc: Doc) -> Doc:
        """Link one doc."""
        return self.set_links(doc, self.pipeline.link(doc.text))

    def pipe(self, stream: Iterable[Doc], batch_size: int | None = None) -> Iterator[Doc]:
        """Link docs a batch at a time, each batch one call of xlnel's batch linking.

        Batches hold at most the component's ``batch_size`` texts, fewer when ``nlp.pipe`` is
        given a smaller ``batch_size``.
        """
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        size = self.batch_size if batch_size is None else min(batch_size, self.batch_size)
        for batch in minibatch(stream, size=size):
            docs = list(batch)
            for doc, links in zip(docs, self.pipeline.link([d.text for d in docs]), strict=True):
                yield self.set_links(doc, links)

    def set_links(self, doc: Doc, links: list[Link]) -> Doc:
        """Put the links on ``doc`` as spans (see the module docstring)."""
        spans = self._spans(doc, links)
        target = self.target
        if target == "auto":
            overlap = len(filter_spans(spans)) < len(spans)
            target = "spans" if overlap or len(doc.ents) else "ents"
        if target == "ents":
            doc.ents = self._merge_ents(doc, spans)
        else:
            doc.spans[self.spans_key] = spans
        return doc

    def _spans(self, doc: Doc, links: list[Link]) -> list[Span]:
        """One span per link; of links that widen to the same span and concept, the best."""
        best: dict[tuple[int, int, str, str], tuple[Span, Link, str]] = {}
        unaligned: list[Link] = []
        for link in links:
            aligned = self._span(doc, link)
            if aligned is None:
                unaligned.append(link)
                continue
            span, alignment = aligned
            key = (span.start, span.end, span.label_, span.kb_id_)
            if key not in best or (link.score or 0.0) > (best[key][1].score or 0.0):
                best[key] = (span, link, alignment)
        for span, link, alignment in best.values():
            span._.xlnel = {"concept_id": link.concept_id, "score": link.score,
                            "concept_name": link.concept_name,
                            "concept_type": link.concept_type,
                            "matched_name": link.matched_name, "source": link.matched_source,
                            "start_char": link.start, "end_char": link.end,
                            "alignment": alignment, "alternatives": list(link.alternatives)}
        if unaligned:
            # a link that no token span holds is lost to spaCy users: say so, not only in debug
            logger.warning("%d link(s) off token boundaries left out (alignment_mode=%r), "
                           "first: %d-%d %r", len(unaligned), self.alignment_mode,
                           unaligned[0].start, unaligned[0].end, unaligned[0].text)
        return [span for span, _, _ in best.values()]

    def _merge_ents(self, doc: Doc, spans: list[Span]) -> list[Span]:
        """The links without overlaps (longest kept) and the doc's entities, one of them giving
        way where they overlap (see ``overwrite_ents``)."""
        links = filter_spans(spans)
        if len(links) < len(spans):
            logger.info("%d overlapping links left out of doc.ents", len(spans) - len(links))
        existing = list(doc.ents)
        first, second = (links, existing) if self.overwrite_ents else (existing, links)
        taken = {i for span in first for i in range(span.start, span.end)}
        kept = [span for span in second if not taken.intersection(range(span.start, span.end))]
        if len(kept) < len(second):
            logger.info("%d %s left out of doc.ents where they overlap %s", len(second) - len(kept),
                        "entities" if self.overwrite_ents else "links",
                        "links" if self.overwrite_ents else "entities already there")
        return sorted(first + kept, key=lambda span: span.start)

    def _span(self, doc: Doc, link: Link) -> tuple[Span, str] | None:
        """The link's span and how it was aligned, or ``None`` when it is left out."""
        label = self.label or link.type or link.concept_type or "CONCEPT"
        cid = "|".join(link.concept_ids)
        span = doc.char_span(link.start, link.end, label=label, kb_id=cid)
        alignment = "exact"
        if span is None and self.alignment_mode != "strict":
            span = doc.char_span(link.start, link.end, label=label, kb_id=cid,
                                 alignment_mode=self.alignment_mode)
            alignment = self.alignment_mode
        return None if span is None else (span, alignment)

    def to_disk(self, path: str | Path, exclude: Iterable[str] = ()) -> None:
        """Write a reference to the xlnel pipeline (``default`` or an absolute folder path)."""
        ref = self.pipeline_ref
        if Path(ref).is_dir():
            ref = str(Path(ref).resolve())
        folder = Path(path)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / _REFERENCE).write_text(json.dumps({"pipeline": ref,
                                                     "configured": self._configured}),
                                         encoding="utf-8")

    def from_disk(self, path: str | Path, exclude: Iterable[str] = ()) -> XlnelLinker:
        """Read the reference written by :meth:`to_disk`; the pipeline loads on first use.

        The saved reference (a folder's absolute path) is used unless the config now names
        another pipeline than the one saved (``spacy.load(path, config=...)``), which wins.
        """
        file = Path(path) / _REFERENCE
        if file.is_file():
            saved = json.loads(file.read_text(encoding="utf-8"))
            if saved.get("configured", self._configured) != self._configured:
                return self
            if saved["pipeline"] != self.pipeline_ref:
                self.pipeline_ref, self._pipeline = saved["pipeline"], None
        return self


@Language.factory(
    "xlnel_linker",
    default_config={"pipeline": "default", "batch_size": 64, "target": "auto",
                    "spans_key": "xlnel", "alignment_mode": "expand", "label": None,
                    "alternatives": None, "overwrite_ents": False},
)
def make_linker(nlp: Language, name: str, pipeline: str, batch_size: int, target: str,
                spans_key: str, alignment_mode: str, label: str | None,
                alternatives: int | None, overwrite_ents: bool) -> XlnelLinker:
    """The factory behind ``nlp.add_pipe("xlnel_linker", config={...})``."""
    return XlnelLinker(nlp, name, pipeline, batch_size, target, spans_key, alignment_mode, label,
                       alternatives, overwrite_ents)
