"""``xlnel.similarity.v1``: no learned filter; a candidate's score is its string similarity."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from xlnel.config import FilterConfig
from xlnel.errors import ArtifactError
from xlnel.filtering.base import CandidateFilter, register_filter
from xlnel.linkers.decide import choose_threshold
from xlnel.types import Candidate, Document
from xlnel.version import __version__

logger = logging.getLogger(__name__)


@register_filter
class SimilarityFilter(CandidateFilter):
    """Keeps candidates whose matcher cosine reaches a threshold (chosen on training data when
    the config leaves it open)."""

    registered_name = "xlnel.similarity.v1"

    def fit(self, documents: Sequence[Document], candidates: Sequence[Sequence[Candidate]],
            progress: bool = False) -> SimilarityFilter:
        """Choose the threshold on ``documents`` unless the config fixes it."""
        if self.config.threshold is None and documents:
            scores = self.score_batch(documents, candidates)
            self.threshold, f1 = choose_threshold(documents, candidates, scores,
                                                  self.config.select_level)
            logger.info("similarity threshold %.3f (training %s F1 %.3f)", self.threshold,
                        self.config.select_level, f1)
        return self

    def score_batch(self, documents: Sequence[Document],
                    candidates: Sequence[Sequence[Candidate]],
                    progress: bool = False) -> list[np.ndarray]:
        """The candidates' own cosine scores."""
        return [np.fromiter((c.score for c in cands), dtype=np.float64, count=len(cands))
                for cands in candidates]

    def save(self, directory: Path) -> None:
        """Write the threshold."""
        directory.mkdir(parents=True, exist_ok=True)
        meta = {"xlnel_version": __version__, "filter": self.registered_name,
                "threshold": self.threshold}
        (directory / "filter.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, config: FilterConfig, lang: str) -> SimilarityFilter:
        """Read the threshold written by :meth:`save` (a threshold in ``config`` wins)."""
        path = directory / "filter.json"
        if not path.is_file():
            raise ArtifactError(f"saved filter in {directory} lacks filter.json")
        f = cls(config, lang)
        if config.threshold is None:
            f.threshold = float(json.loads(path.read_text(encoding="utf-8"))["threshold"])
        return f
