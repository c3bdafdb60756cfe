"""Analyses above the pipeline stages: the reference system's sampled-classifier protocol
(:mod:`xlnel.analysis.protocol`) and dictionary coverage of gold texts
(:mod:`xlnel.analysis.coverage`).

They run whole pipelines or dictionaries with their matchers, so they sit above the stage
packages (``dictionary``, ``candidates``, ``filtering``, ``evaluation``), which never import
them.
"""

from __future__ import annotations

from xlnel.analysis.protocol import ProtocolScores, galperin2022, galperin2022_pipeline

__all__ = ["ProtocolScores", "galperin2022", "galperin2022_pipeline"]
