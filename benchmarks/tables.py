"""Markdown tables of benchmark results, for the docs: ``python -m benchmarks.tables NAME``.

NAME is a results file of ``benchmarks/results`` written by ``adapt_new_language`` or
``dictionary_coverage`` (its ``benchmark`` field picks the table); the table is printed to stdout.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

from benchmarks._common import RESULTS


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _markdown(heads: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(heads) + " |", "|" + "|".join("---" for _ in heads) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def adapt_new_language_table(payload: dict[str, Any]) -> str:
    """Per language and dictionary: concept coverage (%) and accuracy@1/@10 (%), build cost."""
    k = payload["settings"]["k"]
    heads = ["language", "gold rows", "dictionary", "concept exact", "concept fuzzy",
             "acc@1", f"acc@{k}", "build wall s", "build peak MiB"]
    rows = []
    labels = {"english": "English names (untranslated)", "adapted": "xlnel adapt",
              "e5": "multilingual-e5-small (English names)"}
    for lang, parts in payload["results"].items():
        gold = payload["gold"][lang]
        for key, label in labels.items():
            if key not in parts:
                continue
            r = parts[key]
            build = r.get("build", {})
            rows.append([lang, str(gold["rows_evaluated"]), label,
                         _pct(r.get("concept_exact_share")), _pct(r.get("concept_fuzzy_share")),
                         _pct(r["accuracy@1"]), _pct(r[f"accuracy@{k}"]),
                         str(build.get("wall_seconds", "")), str(build.get("peak_rss_mib", ""))])
    if not any(row[-1] for row in rows):  # no build in this file: drop the build columns
        heads, rows = heads[:-2], [row[:-2] for row in rows]
    return _markdown(heads, rows)


def dictionary_coverage_table(payload: dict[str, Any]) -> str:
    """Per community and dictionary: exact and fuzzy coverage (%) of the distinct gold terms."""
    heads = ["community", "gold terms", *[f"{name} {m}" for name in payload["dictionaries"]
                                          for m in ("exact", "fuzzy")]]
    rows = []
    for community, by_dict in payload["results"].items():
        first = next(iter(by_dict.values()))
        cells = [_pct(by_dict[name][f"{m}_share"]) for name in payload["dictionaries"]
                 for m in ("exact", "fuzzy")]
        rows.append([community, str(first["texts"]), *cells])
    return _markdown(heads, rows)


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "adapt_new_language": adapt_new_language_table,
    "dictionary_coverage": dictionary_coverage_table,
}


def main() -> None:
    """Print the table of one results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="Results file name, without .json.")
    args = parser.parse_args()
    path = RESULTS / f"{args.name}.json"
    if not path.is_file():
        parser.error(f"no results file {path}")
    payload = json.loads(path.read_text(encoding="utf-8"))
    if payload.get("benchmark") not in TABLES:
        parser.error(f"{path}: no table for benchmark {payload.get('benchmark')!r}; "
                     f"known: {', '.join(TABLES)}")
    print(TABLES[payload["benchmark"]](payload))


if __name__ == "__main__":
    main()
