"""Build a source-language dictionary from an English knowledge base with a name translator.

Every English name of a concept is translated twice: as a whole string, and word by word (the
n-best renderings of each word combined, keeping the best combinations by summed score, in the
English word order and, by default, reversed, since Hebrew puts the head noun first: *chronic
disease* -> *מחלה כרונית*). The variants are merged per name and the best ones per concept enter
the dictionary as ``translated`` entries of that concept. Word translations are cached, since
many names share words.
"""

from __future__ import annotations

import logging
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from rapidfuzz.distance import Levenshtein
from tqdm import tqdm

from xlnel.dictionary.dictionary import Dictionary, has_word_character
from xlnel.dictionary.pairs import normalize_name
from xlnel.dictionary.transliterate import UNSPACED_SCRIPTS
from xlnel.errors import ConfigError
from xlnel.types import Concept

logger = logging.getLogger(__name__)

Variants = list[tuple[str, float]]
_EDGE_PUNCT = ".,;:!?()[]{}\"'"


class NameTranslator(Protocol):
    """What the builder needs from a translator, such as a ``CharTranslator``."""

    @property
    def kinds(self) -> tuple[str, ...]:
        """Kinds of rendering the translator can be asked for; empty when untagged."""

    def translate(self, names: Sequence[str], beam: int = 5, n_best: int = 5,
                  batch_size: int = 64, kind: str | None = None) -> list[Variants]:
        """Per name, ``(text, score)`` hypotheses, best first."""


def _keep(scored: dict[str, float], text: str, score: float) -> None:
    if text and score > scored.get(text, float("-inf")):
        scored[text] = score


def _top(scored: dict[str, float], k: int | None) -> Variants:
    # sorted() is stable: among equal scores the first inserted variant wins
    return sorted(scored.items(), key=lambda kv: -kv[1])[:k]


def _words(name: str) -> list[str]:
    return [w for w in (t.strip(_EDGE_PUNCT) for t in name.split()) if w]


def _translate_all(translator: NameTranslator, texts: Sequence[str], n_best: int, beam: int,
                   batch_size: int, progress: bool, desc: str) -> dict[str, Variants]:
    """Best ``n_best`` distinct renderings of each text over every kind the translator knows."""
    scored: dict[str, dict[str, float]] = {t: {} for t in texts}
    kinds: Sequence[str | None] = translator.kinds or (None,)
    chunk = batch_size * 16
    steps = [(kind, start) for kind in kinds for start in range(0, len(texts), chunk)]
    for kind, start in tqdm(steps, desc=desc, disable=not progress):
        part = texts[start:start + chunk]
        outputs = translator.translate(part, beam=beam, n_best=min(n_best, beam),
                                       batch_size=batch_size, kind=kind)
        for text, variants in zip(part, outputs, strict=True):
            for variant, score in variants:
                _keep(scored[text], variant, score)
    return {t: _top(s, n_best) for t, s in scored.items()}


def _combine(per_word: Sequence[Variants], n_best: int) -> list[tuple[list[str], float]]:
    """Best word-by-word renderings by summed score (a beam over the words).

    Returns word lists with the mean of the word scores, so that they compare with whole-string
    scores (both are per-symbol log-probabilities); empty if a word has no rendering.
    """
    partial: list[tuple[list[str], float]] = [([], 0.0)]
    for variants in per_word:
        extended = [([*words, v], total + s) for words, total in partial for v, s in variants]
        partial = sorted(extended, key=lambda x: -x[1])[:n_best]
    return [(words, total / len(per_word)) for words, total in partial if words]


def _unspaced(texts: Iterable[str]) -> bool:
    """Whether most letters of ``texts`` belong to scripts written without spaces between
    words (:data:`~xlnel.dictionary.transliterate.UNSPACED_SCRIPTS`: Japanese, Chinese...)."""
    letters = [ch for text in texts for ch in text if ch.isalpha()]
    unspaced = sum(unicodedata.name(ch, "").startswith(UNSPACED_SCRIPTS) for ch in letters)
    return 2 * unspaced > len(letters)


def translate_names(names: Iterable[str], translator: NameTranslator, n_best: int = 3,
                    beam: int = 5, batch_size: int = 64, reverse_word_order: bool = True,
                    max_whole_length: int = 40, progress: bool = False,
                    joiner: str | None = None) -> dict[str, Variants]:
    """Translate names whole and word by word, and merge the variants.

    Args:
        names: English names; normalised (NFKC, lower case) first, which is also the key of the
            result.
        translator: A trained translator; each of its kinds is asked for.
        n_best: Renderings kept per word, per whole name and per name after merging.
        beam: Beam width of the translator.
        batch_size: Names decoded together.
        reverse_word_order: Also emit the word-by-word renderings in reversed word order.
        max_whole_length: Multi-word names longer than this are only translated word by word.
        progress: Show tqdm bars.
        joiner: What joins the words of a word-by-word rendering; ``None``: a space, or
            nothing when most letters of the word renderings are of a script written without
            spaces (Japanese ``慢性腎臓病``, not ``慢性 腎臓 病``).

    Returns:
        Normalised name -> up to ``n_best`` ``(text, score)`` variants, best first. Words without
        letters (numbers) are copied with score 0.
    """
    unique = list(dict.fromkeys(n for n in map(normalize_name, names) if n))
    words = list(dict.fromkeys(w for n in unique for w in _words(n) if _has_letters(w)))
    cache = _translate_all(translator, words, n_best, beam, batch_size, progress, "words")
    wholes = [n for n in unique if len(_words(n)) > 1 and len(n) <= max_whole_length]
    whole = _translate_all(translator, wholes, n_best, beam, batch_size, progress, "names")
    if joiner is None:
        joiner = "" if _unspaced(v[0][0] for v in cache.values() if v) else " "
    result: dict[str, Variants] = {}
    for name in unique:
        per_word = [cache[w] if _has_letters(w) else [(w, 0.0)] for w in _words(name)]
        combos = _combine(per_word, n_best) if per_word else []
        scored: dict[str, float] = {}
        for ws, score in combos:
            _keep(scored, joiner.join(ws), score)
        if reverse_word_order:
            for ws, score in combos:
                _keep(scored, joiner.join(reversed(ws)), score)
        for text, score in whole.get(name, ()):
            _keep(scored, text, score)
        result[name] = _top(scored, n_best)
    logger.info("translated %d names (%d distinct words, %d whole names)", len(unique),
                len(words), len(wholes))
    return result


def _has_letters(word: str) -> bool:
    return any(ch.isalpha() for ch in word)


def build_dictionary(concepts: Iterable[Concept], translator: NameTranslator, lang: str,
                     n_best: int = 3, max_names_per_concept: int | None = 5,
                     progress: bool = False, *, beam: int = 5, batch_size: int = 64,
                     reverse_word_order: bool = True) -> Dictionary:
    """Translate the names of knowledge-base concepts into a source-language dictionary.

    Args:
        concepts: Concepts with English names (preferred name first).
        translator: A trained translator into ``lang``.
        lang: Language of the dictionary; must match the translator's ``target_lang`` when it
            has one.
        n_best: Variants kept per English name (see :func:`translate_names`).
        max_names_per_concept: Most generated names per concept, the best-scored variants over
            all its English names; ``None`` for no limit.
        progress: Show tqdm bars.
        beam: Beam width of the translator.
        batch_size: Names decoded together.
        reverse_word_order: Also emit word-by-word renderings in reversed word order.

    Returns:
        A dictionary whose entries have source ``translated`` and the id of their concept;
        ``kb`` for a rendering that copies an English name (``21``). Names without a letter or
        digit (``-``) are not translated.

    Raises:
        ConfigError: If the translator translates into another language than ``lang``.
        ValueError: If ``n_best`` or ``max_names_per_concept`` is below 1.
    """
    target = getattr(translator, "target_lang", None)
    if target is not None and target != lang:
        raise ConfigError(f"translator translates into {target!r}, dictionary language is {lang!r}")
    if n_best < 1 or (max_names_per_concept is not None and max_names_per_concept < 1):
        raise ValueError(f"n_best and max_names_per_concept must be >= 1, got {n_best}, "
                         f"{max_names_per_concept}")
    concepts = list(concepts)
    variants = translate_names((n for c in concepts for n in c.names), translator, n_best, beam,
                               batch_size, reverse_word_order, progress=progress)
    dictionary = Dictionary()
    for concept in concepts:
        scored: dict[str, float] = {}
        names = [n for n in concept.names if has_word_character(n)]
        for name in names:
            for text, score in variants.get(normalize_name(name), ()):
                _keep(scored, text, score)
        english = {normalize_name(n) for n in names}
        for text, _ in _top(scored, max_names_per_concept):
            # a rendering that copies the English name (a number) is that name, untranslated
            dictionary.add(text, concept.id, "kb" if normalize_name(text) in english
                           else "translated")
    logger.info("built a %s dictionary of %d entries for %d concepts", lang, len(dictionary),
                len(concepts))
    return dictionary


def evaluate_translator(translator: NameTranslator, pairs: Iterable[tuple[str, ...]],
                        beam: int = 5, batch_size: int = 64) -> dict[str, Any]:
    """Exact match at 1 and 5 and character error rate of a translator on reference pairs.

    Pairs are grouped by (normalised source, kind); every target of a group is a correct answer.
    ``cer`` is the edit distance of the best hypothesis to the closest reference over that
    reference's length (1.0 when there is no hypothesis). Tagged pairs are translated with their
    kind when the translator knows it.

    Args:
        pairs: ``(source, target)`` or ``(source, target, kind)`` pairs.
        translator: The translator to evaluate.
        beam: Beam width (5 or more for a meaningful ``exact@5``).
        batch_size: Names decoded together.

    Returns:
        ``{"n", "exact@1", "exact@5", "cer", "by_kind": {kind: {"n", "exact@1", ...}}}``, means
        over groups; all zero when there are no pairs.
    """
    groups: dict[tuple[str, str], set[str]] = {}
    for pair in pairs:
        kind = pair[2] if len(pair) > 2 else ""
        groups.setdefault((normalize_name(pair[0]), kind), set()).add(" ".join(pair[1].split()))
    rows: dict[str, list[tuple[float, float, float]]] = {}
    for kind in sorted({k for _, k in groups}):
        keys = [key for key in groups if key[1] == kind]
        outputs = translator.translate([s for s, _ in keys], beam=beam, n_best=min(5, beam),
                                       batch_size=batch_size,
                                       kind=kind if kind in translator.kinds else None)
        rows[kind] = [_score([t for t, _ in hyps], groups[key]) for key, hyps in
                      zip(keys, outputs, strict=True)]
    report: dict[str, Any] = _means([r for kind_rows in rows.values() for r in kind_rows])
    report["by_kind"] = {kind or "untagged": _means(r) for kind, r in rows.items()}
    return report


def _score(hyps: Sequence[str], refs: set[str]) -> tuple[float, float, float]:
    top = hyps[0] if hyps else ""
    cer = min(Levenshtein.distance(top, ref) / max(len(ref), 1) for ref in refs)
    return float(top in refs), float(any(h in refs for h in hyps[:5])), cer


def _means(rows: Sequence[tuple[float, float, float]]) -> dict[str, object]:
    n = len(rows)
    sums = [sum(r[i] for r in rows) for i in range(3)]
    return {"n": n, **{k: (s / n if n else 0.0) for k, s in zip(("exact@1", "exact@5", "cer"),
                                                                  sums, strict=True)}}
