"""benchmarks/link_throughput.py compares the Ray shard outputs with the single-file output."""

from __future__ import annotations

import gzip

from benchmarks.link_throughput import _same_documents


def test_shard_outputs_are_compared_without_their_writer_records(tmp_path) -> None:
    shards = tmp_path / "out-ray-2"
    shards.mkdir()
    (shards / "part-0000.jsonl.gz").write_bytes(gzip.compress(b'{"id": "a"}\n'))
    (shards / ".part-0000.jsonl.gz.xlnel.json").write_text('{"writer": null}')
    (shards / "part-0001.jsonl.gz").write_bytes(gzip.compress(b'{"id": "b"}\n'))
    single = tmp_path / "all.jsonl.gz"
    single.write_bytes(gzip.compress(b'{"id": "a"}\n{"id": "b"}\n'))
    assert _same_documents(single, shards)
    single.write_bytes(gzip.compress(b'{"id": "b"}\n{"id": "a"}\n'))
    assert not _same_documents(single, shards)
