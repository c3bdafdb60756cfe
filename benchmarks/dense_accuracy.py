"""Accuracy@1/@5 of the dense linker on gold mentions, before and after synonym alignment.

Experiments (each also runnable as the ``xlnel encoder`` command recorded in the results):

* ``camoni``: Camoni diabetes (Hebrew). The visible posts are split by document 80/20 with
  seed 0, as ``configs/camoni-diabetes.yaml`` does. ``diabetes_term_to_cui.tsv`` lists the
  terms of all gold spans, so the dictionary drops the terms found only in the held-out 20%
  and adds the training posts' (mention, CUI) pairs; held-out gold mentions are linked to it
  before and after aligning multilingual-e5-small on that dictionary.
  (``hebrew_umls_names.txt`` has no concept ids, so it cannot give concept accuracy.)
* ``bc5cdr``: BC5CDR dev gold mentions (``--dev-docs N``: of the first N documents) linked to
  MeSH names. With ``--mesh-names N`` the dictionary is every name of the evaluated mentions'
  concepts plus random other MeSH concepts up to N names (embedding all 64,837 names on a
  shared 2-core CPU takes over an hour); the report says which. The encoder is then aligned
  on a sample of MeSH synonyms (``--align-pairs`` names, ``--align-steps`` batches) and
  evaluated again.
* ``e2e``: a dense pipeline config (``--e2e-config``, default ``configs/pipelines/dense.yaml``)
  trained on a corpus (``--e2e-data``, default ``configs/data/camoni-diabetes.yaml``), run on its
  held-out documents and scored.

Writes ``benchmarks/results/dense_accuracy.json`` after every step, keeping the results of the
part not rerun (``--only``). Run from the repository
root, e.g. ``nice -n 10 python -m benchmarks dense_accuracy --work /tmp/dense``.
The encoder runs on a GPU when one is present; ``XLNEL_DEVICE=cpu`` forces the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._common import RESULTS, write_result
from xlnel.dictionary.dft import split_documents  # noqa: E402
from xlnel.dictionary.dictionary import Dictionary  # noqa: E402
from xlnel.io import load_kb, read_documents, write_documents  # noqa: E402
from xlnel.linkers.align import align_encoder, evaluate_encoder  # noqa: E402

DATA = Path("../shared/data")
MODEL = "multilingual-e5-small"
DEVICE = os.environ.get("XLNEL_DEVICE", "auto")  # cpu, cuda or auto (a GPU when one is present)


def _cmd(parts: list[str]) -> str:
    return " ".join(f"'{p}'" if (" " in p or not p) else p for p in parts)


def _evaluate(results: list[dict[str, Any]], label: str, model: str, kb: list[str],
              gold: Path, dictionaries: list[Path], lang: str) -> None:
    args = ["xlnel", "encoder", "evaluate", *[x for s in kb for x in ("--kb", s)],
            *[x for d in dictionaries for x in ("--dictionary", str(d))], "--gold", str(gold),
            "--model", model, "--lang", lang, "--device", DEVICE]
    t0 = time.perf_counter()
    report = evaluate_encoder(model, kb, gold, dictionaries, lang, 5, {"device": DEVICE})
    results.append({"experiment": label, "command": _cmd(args),
                    "wall_seconds": round(time.perf_counter() - t0, 1), **report})
    print(f"{label}: {report}", file=sys.stderr, flush=True)


def _align(results: list[dict[str, Any]], label: str, kb: list[str], out: Path,
           dictionaries: list[Path], options: dict[str, Any]) -> None:
    args = ["xlnel", "encoder", "align", *[x for s in kb for x in ("--kb", s)],
            *[x for d in dictionaries for x in ("--dictionary", str(d))], "--model", MODEL,
            "--out", str(out), *[x for k, v in options.items() if v is not None
                                 for x in (f"--{k.replace('_', '-')}", str(v))]]
    t0 = time.perf_counter()
    report = align_encoder(kb, out, dictionaries, {"model": MODEL, **options})
    results.append({"experiment": label, "command": _cmd(args),
                    "wall_seconds": round(time.perf_counter() - t0, 1), **report})
    print(f"{label}: {report}", file=sys.stderr, flush=True)


def camoni(work: Path, results: list[dict[str, Any]], steps: int | None,
           save: Any) -> None:
    """Accuracy on the held-out Camoni diabetes posts, with a dictionary free of their terms."""
    from xlnel.normalization import normalize_string

    docs = read_documents(DATA / "camoni/diabetes.jsonl")
    test, train = split_documents(docs, 0.2, 0)
    work.mkdir(parents=True, exist_ok=True)
    gold = work / "camoni_diabetes_test.jsonl"
    write_documents(gold, test)
    train_keys = {normalize_string(e.text, "he") for d in train for e in d.entities}
    test_only = {normalize_string(e.text, "he") for d in test for e in d.entities} - train_keys
    dictionary = Dictionary()
    for concept in load_kb(f"term2cui:{DATA / 'camoni/diabetes_term_to_cui.tsv'}"):
        for name in concept.names:
            if normalize_string(name, "he") not in test_only:
                dictionary.add(name, concept.id)
    for doc in train:
        for ent in doc.entities:
            for cid in ent.concept_ids:
                dictionary.add(ent.text, cid, "annotation")
    terms = work / "camoni_diabetes_terms_train.tsv"
    dictionary.save(terms)
    results.append({"experiment": "camoni dictionary", "path": str(terms),
                    "names": len(dictionary.names), "removed_test_only_strings": len(test_only),
                    "rule": "diabetes_term_to_cui.tsv (Hebrew terms of all gold spans) minus "
                            "the terms that occur only in the held-out 20% posts, plus the "
                            "training posts' (mention, CUI) pairs: held-out mentions not seen "
                            "in training must be matched to another name of their concept"})
    _evaluate(results, "camoni e5", MODEL, [], gold, [terms], "he")
    save()
    aligned = work / "e5-aligned-camoni"
    _align(results, "camoni align", [], aligned, [terms],
           {"lang": "he", "batch_size": 32, "epochs": 2, "max_steps": steps, "device": DEVICE})
    save()
    _evaluate(results, "camoni aligned", str(aligned), [], gold, [terms], "he")
    save()


def mesh_subset(path: Path, n_names: int, gold_docs: list[Any], seed: int = 0) -> dict[str, int]:
    """Write a MeSH TSV: the gold concepts plus random others up to ``n_names`` names."""
    concepts = load_kb(f"tsv:{DATA / 'kb/mesh_names.tsv'}")
    gold = {cid for doc in gold_docs for ent in doc.entities for cid in ent.concept_ids}
    keep = [c for c in concepts if c.id in gold]
    others = [c for c in concepts if c.id not in gold]
    random.Random(seed).shuffle(others)
    total = sum(len(c.names) for c in keep)
    for c in others:
        if total >= n_names:
            break
        keep.append(c)
        total += len(c.names)
    with open(path, "w", encoding="utf-8") as f:
        f.write("concept_id\tname\tpreferred\n")
        for c in keep:
            for i, name in enumerate(c.names):
                f.write(f"{c.id}\t{name}\t{int(i == 0)}\n")
    return {"concepts": len(keep), "names": total,
            "gold_concepts_in_mesh": sum(1 for c in keep if c.id in gold)}


def bc5cdr(work: Path, results: list[dict[str, Any]], n_names: int | None,
           dev_docs: int | None, pairs: int, steps: int, save: Any) -> None:
    """BC5CDR dev accuracy on MeSH (or a subset), before and after alignment."""
    work.mkdir(parents=True, exist_ok=True)
    docs = read_documents(DATA / "bc5cdr/dev.pubtator")
    gold = DATA / "bc5cdr/dev.pubtator"
    if dev_docs is not None:
        docs = docs[:dev_docs]
        gold = work / f"bc5cdr_dev_first{dev_docs}.jsonl"
        write_documents(gold, docs)
    if n_names is None:
        kb = [f"tsv:{DATA / 'kb/mesh_names.tsv'}"]
    else:
        subset = work / f"mesh_subset_{n_names}.tsv"
        info = mesh_subset(subset, n_names, docs)
        results.append({"experiment": "bc5cdr mesh subset", "path": str(subset), **info,
                        "gold": str(gold), "gold_documents": len(docs),
                        "rule": "all MeSH names of the evaluated gold mentions' concepts, plus "
                                "random MeSH concepts (seed 0) up to the name budget"})
        kb = [f"tsv:{subset}"]
    _evaluate(results, "bc5cdr e5", MODEL, kb, gold, [], "en")
    save()
    aligned = work / "e5-aligned-mesh"
    _align(results, "bc5cdr align", [f"tsv:{DATA / 'kb/mesh_names.tsv'}"], aligned, [],
           {"batch_size": 32, "lr": 5e-5, "max_pairs": pairs, "max_steps": steps,
            "device": DEVICE})
    save()
    _evaluate(results, "bc5cdr aligned", str(aligned), kb, gold, [], "en")
    save()


def e2e(config: Path, data: Path, work: Path, results: list[dict[str, Any]], save: Any) -> None:
    """``xlnel train`` (pipeline ``config`` on corpus ``data``) + ``xlnel link`` of the held-out
    documents + ``xlnel evaluate``."""
    from xlnel.config import load_config
    from xlnel.evaluation.files import evaluate_files
    from xlnel.pipeline import link, train

    name = f"{data.stem}-{config.stem}"
    out = work / f"e2e-{name}"
    pred = work / f"e2e-{name}-pred.jsonl"
    cfg = load_config(config, {"include": str(data)})
    t0 = time.perf_counter()
    report = train(cfg, out)
    t1 = time.perf_counter()
    gold = out / "test.jsonl" if cfg.data.test is None else Path(cfg.data.test)
    link(out, gold, pred)
    t2 = time.perf_counter()
    scores = {level: evaluate_files(gold, pred, level).to_dict()
              for level in ("span", "concept")}
    results.append({"experiment": f"e2e {name}", "commands": [
        f"xlnel train {config} --include {data} --out {out}",
        f"xlnel link {out} {gold} --out {pred}",
        f"xlnel evaluate {gold} {pred} --level span|concept --json"],
        "train_seconds": round(t1 - t0, 1), "link_seconds": round(t2 - t1, 1),
        "threshold": report["filter"]["threshold"], **scores})
    save()


def _device_name() -> str:
    """The device the encoder runs on here, for the results file."""
    import torch

    if DEVICE != "cpu" and torch.cuda.is_available():
        return f"{torch.cuda.get_device_name(0)}, {os.cpu_count()} CPU cores"
    return f"CPU, {os.cpu_count()} cores"


def _previous(parts: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Runs and results already in the results file for the parts not rerun now."""
    path = RESULTS / "dense_accuracy.json"
    if not path.is_file():
        return [], []
    old = json.loads(path.read_text(encoding="utf-8"))["results"]
    if "runs" not in old:  # a file of one run
        done = sorted({r["experiment"].split()[0] for r in old.get("results", [])})
        old["runs"] = [{"command": old.get("command"), "parts": done,
                        "wall_seconds": old.get("wall_seconds")}]
    runs = [r for r in old["runs"] if not set(r.get("parts", [])) <= set(parts)]
    kept = [r for r in old.get("results", [])
            if r["experiment"].split()[0] not in parts]
    return runs, kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/dense"))
    parser.add_argument("--only", choices=["camoni", "bc5cdr", "e2e"], default=None)
    parser.add_argument("--e2e-config", type=Path, action="append", default=None,
                        help="pipeline config run end to end (part e2e; repeatable)")
    parser.add_argument("--e2e-data", type=Path, default=Path("configs/data/camoni-diabetes.yaml"),
                        help="corpus of the e2e part (a configs/data/ file)")
    parser.add_argument("--camoni-steps", type=int, default=None)
    parser.add_argument("--mesh-names", type=int, default=10000,
                        help="MeSH name budget; 0 = all names")
    parser.add_argument("--dev-docs", type=int, default=None,
                        help="evaluate on the first N BC5CDR dev documents only")
    parser.add_argument("--align-pairs", type=int, default=4000)
    parser.add_argument("--align-steps", type=int, default=100)
    args = parser.parse_args()
    parts = ["camoni", "bc5cdr", "e2e"] if args.only is None else [args.only]
    runs, kept = _previous(parts)
    results: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    run: dict[str, Any] = {"command": _cmd(["python", *sys.argv]), "parts": parts,
                           "device": _device_name()}

    def save() -> None:
        run["wall_seconds"] = round(time.perf_counter() - t0, 1)
        write_result("dense_accuracy", {
            "runs": [*runs, run], "results": [*kept, *results],
            "note": "Each run names its device (XLNEL_DEVICE, default auto); runs without one "
                    "were CPU only, on a 2-core machine shared with other jobs (load 10+)."})

    if args.only in (None, "camoni"):
        camoni(args.work, results, args.camoni_steps, save)
    if args.only in (None, "bc5cdr"):
        bc5cdr(args.work, results, args.mesh_names or None, args.dev_docs, args.align_pairs,
               args.align_steps, save)
    if "e2e" in parts:
        for config in args.e2e_config or [Path("configs/pipelines/dense.yaml")]:
            e2e(config, args.e2e_data, args.work, results, save)
    save()


if __name__ == "__main__":
    main()
