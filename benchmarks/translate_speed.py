"""Names translated per second by the character translator on CPU (beam 5, batched).

Uses the saved en->he model when there is one (``dictionary/built/translator-he``), otherwise a
freshly initialised model of the default size (same cost per step, untrained outputs). Names are
MeSH names from ``../shared/data/kb/mesh_names.tsv`` when present, else synthetic names.
Measures whole names batched and one at a time, single words, and the dictionary builder end to
end; writes ``benchmarks/results/translate_speed.json``.

    python -m benchmarks translate_speed [--names 2000] [--beam 5] [--batch-size 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import csv
import random
import time
from pathlib import Path
from typing import Any

import torch

from benchmarks._common import write_result
from xlnel.dictionary.builder import build_dictionary  # noqa: E402
from xlnel.dictionary.pairs import normalize_name  # noqa: E402
from xlnel.dictionary.translator import (  # noqa: E402
    CharTranslator,
    CharVocab,
    TranslatorConfig,
)
from xlnel.types import Concept  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / "dictionary" / "built" / "translator-he"
MESH = ROOT.parent / "shared" / "data" / "kb" / "mesh_names.tsv"


def load_names(n: int, max_length: int, seed: int = 0) -> tuple[list[str], list[Concept], str]:
    """A random sample of ``n`` distinct names (and their concepts), and where they came from."""
    by_concept: dict[str, list[str]] = {}
    if MESH.is_file():
        with open(MESH, encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                by_concept.setdefault(row["concept_id"], []).append(row["name"])
        origin = str(MESH)
    else:
        rng = random.Random(seed)
        for i in range(n):
            words = ["".join(rng.choice("abcdefghilmnoprstuy") for _ in range(rng.randint(3, 10)))
                     for _ in range(rng.choice((1, 1, 2, 3)))]
            by_concept[f"S{i}"] = [" ".join(words)]
        origin = "synthetic"
    concepts = [Concept(cid, tuple(names)) for cid, names in by_concept.items()]
    random.Random(seed).shuffle(concepts)
    names = list(dict.fromkeys(normalize_name(n) for c in concepts for n in c.names
                               if len(n) <= max_length))
    return names[:n], concepts, origin


def get_model(path: Path | None) -> tuple[CharTranslator, str]:
    """The saved model, or a fresh default-size one when there is none."""
    if path is not None and path.is_dir():
        return CharTranslator.load(path, device="cpu"), str(path)
    source = CharVocab.build(["abcdefghijklmnopqrstuvwxyz0123456789 -,'()"],
                             extra=["<translation>", "<transliteration>"])
    target = CharVocab.build(["אבגדהוזחטיכלמנסעפצקרשתםןףץ '-\""])
    model = CharTranslator(TranslatorConfig(), source, target, ("translation", "transliteration"))
    return model, "fresh (untrained, default size)"


def rate(model: CharTranslator, names: list[str], beam: int, batch_size: int) -> dict[str, Any]:
    """Wall time and names per second of one batched translation of ``names``."""
    start = time.perf_counter()
    model.translate(names, beam=beam, n_best=beam, batch_size=batch_size)
    seconds = time.perf_counter() - start
    return {"names": len(names), "seconds": round(seconds, 3),
            "names_per_second": round(len(names) / seconds, 1),
            "mean_chars": round(sum(map(len, names)) / max(len(names), 1), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--names", type=int, default=2000)
    parser.add_argument("--concepts", type=int, default=300)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    model, model_origin = get_model(args.model)
    names, concepts, origin = load_names(args.names, model.config.max_length)
    words = list(dict.fromkeys(w for n in names for w in n.split()))[:args.names]
    model.translate(names[:args.batch_size], beam=args.beam)  # warm-up
    results: dict[str, Any] = {
        "whole_names_batched": rate(model, names, args.beam, args.batch_size),
        "whole_names_one_by_one": rate(model, names[:200], args.beam, 1),
        "words_batched": rate(model, words, args.beam, args.batch_size),
    }
    start = time.perf_counter()
    d = build_dictionary(concepts[:args.concepts], model, model.target_lang, n_best=3,
                         beam=args.beam, batch_size=args.batch_size)
    seconds = time.perf_counter() - start
    results["build_dictionary"] = {
        "concepts": args.concepts, "entries": len(d), "seconds": round(seconds, 2),
        "concepts_per_second": round(args.concepts / seconds, 1),
        "note": "all names of each concept, whole and word by word, both kinds, n_best=3"}
    payload = {"benchmark": "translate_speed", "model": model_origin, "names_from": origin,
               "beam": args.beam, "n_best": args.beam, "batch_size": args.batch_size,
               "torch_threads": args.threads, "torch": torch.__version__,
               "kinds": list(model.kinds), "results": results}
    target = write_result("translate_speed", payload)
    for key, value in results.items():
        print(f"{key:24s} {value}")
    print(f"written to {target}")


if __name__ == "__main__":
    main()
