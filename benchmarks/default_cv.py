"""Filter choice of the embedded default pipeline: 5-fold document cross-validation on the
shipped English HPO sample (``xlnel/resources/hpo_sample_en.txt``).

Each fold trains on 4/5 of the sample's documents (DFT R = 0.2, HPO names, TF-IDF candidates)
and links the remaining 1/5 with each filter variant; P/R/F1 are micro-averaged over the folds.

    python -m benchmarks default_cv
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from benchmarks._common import write_result
from xlnel.candidates.base import generator_class  # noqa: E402
from xlnel.config import load_config  # noqa: E402
from xlnel.defaults import sample_documents  # noqa: E402
from xlnel.dictionary.dft import fine_tune_dictionary  # noqa: E402
from xlnel.evaluation import evaluate  # noqa: E402
from xlnel.filtering.base import filter_class  # noqa: E402
from xlnel.linkers.decide import decide  # noqa: E402
from xlnel.pipeline import build_dictionary  # noqa: E402

VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "similarity": ("xlnel.similarity.v1", {}),
    "gbdt-default": ("xlnel.gbdt.v1", {}),
    "gbdt-small": ("xlnel.gbdt.v1", {"max_iter": 100, "max_leaf_nodes": 8,
                                     "learning_rate": 0.05}),
    "gbdt-tiny": ("xlnel.gbdt.v1", {"max_iter": 60, "max_leaf_nodes": 4, "learning_rate": 0.1,
                                    "l2_regularization": 5.0}),
}


def cross_validate(k: int = 5) -> dict[str, Any]:
    """Micro-averaged span and concept P/R/F1 of each variant over ``k`` folds."""
    docs = sample_documents()
    cfg = load_config(None, {"lang": "en", "dictionary.kb": ["hpo"]})
    counts = {v: {"span": [0, 0, 0], "concept": [0, 0, 0]} for v in VARIANTS}
    for fold in range(k):
        test = [d for i, d in enumerate(docs) if i % k == fold]
        train = [d for i, d in enumerate(docs) if i % k != fold]
        dictionary = build_dictionary(cfg)
        filter_docs, _ = fine_tune_dictionary(dictionary, train, 0.2, 0, "name")
        gen = generator_class("xlnel.tfidf_char.v1")(cfg.candidates, "en").fit(dictionary)
        c_train, c_test = gen.generate_batch(filter_docs), gen.generate_batch(test)
        for variant, (name, options) in VARIANTS.items():
            fc = load_config(None, {"filter.name": name, "filter.options": options}).filter
            filt = filter_class(name)(fc, "en").fit(filter_docs, c_train)
            scores = filt.score_batch(test, c_test)
            pred = [decide(d, c, s, filt.threshold, "longest")
                    for d, c, s in zip(test, c_test, scores, strict=True)]
            for level in ("span", "concept"):
                r = evaluate(test, pred, level)
                for i, n in enumerate((r.tp, r.fp, r.fn)):
                    counts[variant][level][i] += n
        print(f"fold {fold + 1}/{k} done", flush=True)
    return {v: {level: _prf(*c) for level, c in by.items()} for v, by in counts.items()}


def _prf(tp: int, fp: int, fn: int) -> dict[str, float]:
    p, r = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return {"P": round(100 * p, 1), "R": round(100 * r, 1),
            "F1": round(100 * 2 * p * r / max(p + r, 1e-9), 1)}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    t0 = time.perf_counter()
    results = cross_validate()
    for variant, by in results.items():
        print(variant, by)
    write_result("default_cv", {"documents": len(sample_documents()), "folds": 5,
                                "variants": results,
                                "seconds": round(time.perf_counter() - t0, 1)})


if __name__ == "__main__":
    main()
