"""Encoder cosines of concepts near looked-up texts, for the ``hybrid`` lookup ranking.

A built dictionary finds a text's concepts by TF-IDF character n-grams among rendered names; a
multilingual encoder finds them by meaning among the knowledge base's English names. They fail
on different texts (a rendering the word pairs lack, a paraphrase the n-grams miss), so
:class:`~xlnel.analysis.coverage.DictionaryLookup` can rank concepts by the sum of both
(``rank="hybrid"``). :func:`encoder_scores` gives the encoder side: for each text, the best
cosine of every concept among its ``top_m`` nearest names.

The names searched are the dictionary's knowledge-base names (source ``kb``, the English names
``xlnel adapt`` keeps), or all its names when it has none. Their embeddings are cached under
``XLNEL_CACHE/embeddings``. Needs the ``neural`` extra (torch, transformers).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from xlnel.dictionary.dictionary import Dictionary

logger = logging.getLogger(__name__)

__all__ = ["DenseScores", "encoder_names", "encoder_scores"]

#: Best encoder cosine of each concept near each normalised text, in text order.
DenseScores = Callable[[Sequence[str]], list[dict[str, float]]]
#: Names searched per text (their concepts are scored; a concept further away has no score).
TOP_M = 200


def encoder_names(dictionary: Dictionary) -> Dictionary:
    """The names the encoder searches: the ``kb`` entries, or every entry when none is."""
    kb = [entry for entry in dictionary if entry.source == "kb"]
    return Dictionary(kb) if kb else dictionary


def encoder_scores(dictionary: Dictionary, lang: str, model: str, top_m: int = TOP_M,
                   device: str = "cpu") -> DenseScores:
    """A function giving, for normalised texts, each nearby concept's best encoder cosine.

    Args:
        dictionary: Dictionary whose names (see :func:`encoder_names`) are embedded.
        lang: Normalisation language of the texts.
        model: Encoder: a Hugging Face id, a local folder or a name of ``xlnel models``.
        top_m: Names searched per text.
        device: Torch device of the encoder.

    Raises:
        ValueError: If ``top_m`` is below 1 or the dictionary is empty.
    """
    if top_m < 1:
        raise ValueError(f"top_m must be at least 1, got {top_m}")
    names = encoder_names(dictionary)
    if not len(names):
        raise ValueError("the dictionary has no name for the encoder to search")
    from xlnel.config import CandidatesConfig
    from xlnel.linkers.dense import DenseCandidateGenerator

    config = CandidatesConfig(generator="xlnel.dense.v1", threshold=0.0, top_m=top_m,
                              options={"model": model, "switch_threshold": None,
                                       "device": device})
    logger.info("embedding %d names with %s", len(names), model)
    generator = DenseCandidateGenerator(config, lang).fit(names)

    def scores(keys: Sequence[str]) -> list[dict[str, float]]:
        out: list[dict[str, float]] = []
        for lo in range(0, len(keys), 1024):
            for hits in generator.nearest(list(keys[lo:lo + 1024])):
                best: dict[str, float] = {}
                for cid, _, cosine in hits:  # best first: the first cosine is the best
                    best.setdefault(cid, float(cosine))
                out.append(best)
        return out

    return scores
