"""Sharded linking on a Ray cluster; the code lives in :mod:`xlnel.corpus.distributed`, this
module keeps the ``xlnel.distributed`` names importable."""

from __future__ import annotations

from xlnel.corpus.distributed import ShardLinker, link_shards_ray

__all__ = ["ShardLinker", "link_shards_ray"]
