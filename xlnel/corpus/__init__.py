"""Corpus-scale linking above the runtime pipeline: streams, files, processes, shards, Ray.

- :mod:`xlnel.corpus.stream`: documents linked batch by batch, in this process or a pool.
- :mod:`xlnel.corpus.shards`: shard plans and the records that make sharded runs resumable.
- :mod:`xlnel.corpus.distributed`: the shard plan as a Ray Data job.
- :mod:`xlnel.corpus.convert`: :func:`convert`, a corpus from one document format to another.
- :mod:`xlnel.corpus.linking`: the public functions (:func:`link`, :func:`link_documents`,
  :func:`link_shards`, :func:`candidate_recall`).
"""

from __future__ import annotations

from xlnel.corpus.convert import convert
from xlnel.corpus.linking import candidate_recall, link, link_documents, link_shards

__all__ = ["candidate_recall", "convert", "link", "link_documents", "link_shards"]
