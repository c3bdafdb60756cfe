"""Stop-word lists that keep function words from starting or ending a candidate span.

Shared by the stages: span generation and the filters read them, and the dictionary builder
derives a list for a language without one (:mod:`xlnel.dictionary.stopwords`).

The lists are plain text files, one word a line (``#`` starts a comment), kept in the repository
under ``candidates/stopwords/<lang>.txt`` and shipped inside wheels as
``xlnel/resources/stopwords/<lang>.txt``.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from pathlib import Path

from xlnel.normalization import hebrew_rules, normalize_string

__all__ = ["load_stopwords", "read_stopword_file", "stopword_dirs"]

logger = logging.getLogger(__name__)


def stopword_dirs() -> list[Path]:
    """Folders searched for ``<lang>.txt``, in order.

    Returns:
        The packaged resource folder of an installed wheel, then the repository folder of a
        source checkout or editable install.
    """
    package_root = Path(__file__).resolve().parent
    return [
        package_root / "resources" / "stopwords",
        package_root.parent / "candidates" / "stopwords",
    ]


def read_stopword_file(path: str | Path, lang: str) -> frozenset[str]:
    """Read a stop-word file and normalise its words.

    Args:
        path: Text file, one word a line; blank lines and ``#`` comments are skipped.
        lang: Language whose normalisation rules apply to the words.

    Returns:
        The normalised words.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
    """
    path = Path(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        raise FileNotFoundError(f"stop-word file {path} {what}")
    words = set()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            word = normalize_string(line.split("#", 1)[0], lang)
            if word:
                words.add(word)
    return frozenset(words)


def load_stopwords(lang: str, path: str | Path | None = None) -> frozenset[str]:
    """Load the stop words of a language, normalised with :func:`normalize_string`.

    Args:
        lang: Language code (``"en"``, ``"he"``; ``"iw"`` is read as ``"he"``).
        path: Explicit stop-word file; ``None`` looks up the list shipped with xlnel.

    Returns:
        The stop words; an empty set (with a warning) when no list exists for ``lang``.

    Raises:
        FileNotFoundError: If an explicit ``path`` does not exist.
    """
    if path is not None:
        return read_stopword_file(path, lang)
    return _load_packaged(lang.lower())


@lru_cache(maxsize=32)
def _load_packaged(lang: str) -> frozenset[str]:
    name = "he" if hebrew_rules(lang) else lang
    for folder in stopword_dirs():
        candidate = folder / f"{name}.txt"
        if candidate.is_file():
            logger.debug("Loading %s stop words from %s", lang, candidate)
            return read_stopword_file(candidate, lang)
    logger.warning(
        "No stop-word list for language %r (looked in %s); using none",
        lang,
        ", ".join(str(folder) for folder in stopword_dirs()),
    )
    return frozenset()
