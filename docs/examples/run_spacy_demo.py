"""Run spacy_demo.py, print its output and write its displaCy page (docs/img/spacy-displacy.html, for a screenshot).

    python docs/examples/run_spacy_demo.py   # from the repository root, after
    xlnel train configs/camoni-diabetes-cui.yaml --out runs/diabetes-cui
"""

from __future__ import annotations

import runpy
from pathlib import Path

here = Path(__file__).resolve().parent
names = runpy.run_path(str(here / "spacy_demo.py"))
(here.parent / "img" / "spacy-displacy.html").write_text(names["html"], encoding="utf-8")
