"""Peak memory and time of linking one long document (BC5CDR dev abstracts repeated).

Builds a synthetic document of ``--chars`` characters (default 5 MB) from the BC5CDR dev
abstracts, paragraphs separated by blank lines, and links it with a trained pipeline in a fresh
process (``_common.run_isolated``: its peak RSS is its own), in windows of
``linker.window_chars``. A check on a ``--check-chars`` prefix links it both whole (one window)
and in windows, each in its own process, and compares the links.

    python -m benchmarks long_document --pipeline runs/bc5cdr-small
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchmarks._common import run_isolated, write_result
from xlnel.io import read_documents  # noqa: E402
from xlnel.types import Document  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / ".." / "shared" / "data" / "bc5cdr" / "dev.pubtator"


def build_text(chars: int) -> str:
    """BC5CDR dev abstracts repeated, blank lines between them, cut to ``chars`` characters."""
    abstracts = [d.text for d in read_documents(DEV)]
    parts: list[str] = []
    total, i = 0, 0
    while total < chars:
        parts.append(abstracts[i % len(abstracts)])
        total += len(parts[-1]) + 2
        i += 1
    return "\n\n".join(parts)[:chars]


def link_one(pipeline: str, chars: int, overrides: dict[str, Any]) -> dict[str, Any]:
    """Load the pipeline and link one document of ``chars`` characters (in a child process)."""
    from xlnel.pipeline import Pipeline

    text = build_text(chars)
    t0 = time.perf_counter()
    pipe = Pipeline.load(pipeline, overrides)
    t1 = time.perf_counter()
    doc = pipe.link_batch([Document("long", text)])[0]
    t2 = time.perf_counter()
    return {"chars": len(text), "utf8_bytes": len(text.encode()), "overrides": overrides,
            "load_seconds": round(t1 - t0, 2), "link_seconds": round(t2 - t1, 2),
            "links": len(doc.entities),
            "entities": [(e.start, e.end, e.concept_ids) for e in doc.entities]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pipeline", default=str(ROOT / "runs" / "bc5cdr-small"))
    parser.add_argument("--chars", type=int, default=5_000_000)
    parser.add_argument("--check-chars", type=int, default=60_000)
    args = parser.parse_args()
    whole = run_isolated(link_one, args.pipeline, args.check_chars,
                         {"linker.window_chars": args.check_chars})
    windowed = run_isolated(link_one, args.pipeline, args.check_chars, {})
    same = whole.pop("entities") == windowed.pop("entities")
    print(f"check {args.check_chars} chars: whole {whole['peak_rss_mib']:.0f} MiB, windows "
          f"{windowed['peak_rss_mib']:.0f} MiB, identical links: {same}", flush=True)
    long = run_isolated(link_one, args.pipeline, args.chars, {})
    long.pop("entities")
    print(f"{long['chars']} chars: {long['link_seconds']} s, peak {long['peak_rss_mib']:.0f} MiB")
    write_result("long_document", {
        "pipeline": args.pipeline, "long": long,
        "check": {"chars": args.check_chars, "whole": whole, "windows": windowed,
                  "identical_links": same},
        "peak_rss_under_1_gib": long["peak_rss_mib"] < 1024,
    })


if __name__ == "__main__":
    main()
