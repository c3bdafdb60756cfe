"""Train the en->he character translator on MUSE en-he (plus derived transliteration tags).

Reproduces ``benchmarks/results/translator_he.json`` and the model in
``dictionary/built/translator-he`` (git-ignored): 5% of the English source words are held out
(split seed 0) and the translator is scored on them (exact@1, exact@5, CER), overall and by kind.
About 12 minutes on 2 CPU cores. Run from the repository root::

    python -m benchmarks train_translator_he [--max-seconds 720] [--epochs 20]

It is the same run as ``xlnel dictionary train-translator ../shared/data/muse/en-he.txt
--out dictionary/built/translator-he --epochs 20 --max-seconds 720``.
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time
from pathlib import Path

import torch

from benchmarks._common import write_result
from xlnel.dictionary.translate_kb import train_translator_from_pairs  # noqa: E402

MUSE = Path("../shared/data/muse/en-he.txt")
THREADS = 1  # 2 shared cores: one intra-op thread avoids oversubscription


def main() -> None:
    """Train, evaluate on the held-out words and write the result JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=MUSE)
    parser.add_argument("--out", type=Path, default=Path("dictionary/built/translator-he"))
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--max-seconds", type=float, default=720.0)
    parser.add_argument("--test-fraction", type=float, default=0.05)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    torch.set_num_threads(THREADS)
    started = time.monotonic()
    report = train_translator_from_pairs(
        args.pairs, args.out, {"epochs": args.epochs, "max_train_seconds": args.max_seconds,
                               "target_lang": "he"},
        test_fraction=args.test_fraction, split_seed=0, progress=True)
    payload = {
        "task": "en->he character translator (stage 1 dictionary builder)",
        "command": "python -m benchmarks train_translator_he" + "".join(
            f" {a}" for a in sys.argv[1:]),
        **report,
        "torch": torch.__version__, "torch_threads": THREADS, "machine_arch": platform.machine(),
        "cpu_count": os.cpu_count(), "total_wall_seconds": round(time.monotonic() - started, 1),
        "eval": {"beam": 5, "metric_notes": "means over (source, kind) groups; any target of the "
                 "group counts as correct; cer = edit distance of top-1 to the closest reference "
                 "over its length"},
    }
    write_result("translator_he", payload)
    held = report["held_out"]
    print(f"held out: n {held['n']}  exact@1 {held['exact@1']:.3f}  "
          f"exact@5 {held['exact@5']:.3f}  CER {held['cer']:.3f}")


if __name__ == "__main__":
    main()
