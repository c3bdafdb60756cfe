"""The generated tables of README.md and docs/ match the results files they come from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from benchmarks import _tables_base
from benchmarks import tables as tables_module

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tables() -> ModuleType:
    return tables_module


def test_committed_tables_are_current() -> None:
    run = subprocess.run([sys.executable, "-m", "benchmarks", "tables", "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_render_fills_markers_and_refuses_unknown_names(tables: ModuleType) -> None:
    text = "intro\n<!-- table:cascade_host_time -->\nstale\n<!-- /table -->\nend\n"
    out = tables.render(text, "page.md")
    assert out.startswith("intro\n<!-- table:cascade_host_time -->\n| step |")
    assert "stale" not in out and out.endswith("<!-- /table -->\nend\n")
    assert "Source: `benchmarks/results/cascade_host_time.json`." in out
    assert tables.render(out, "page.md") == out
    with pytest.raises(KeyError, match="page.md: unknown table 'nope'"):
        tables.render("<!-- table:nope -->\n<!-- /table -->", "page.md")


def test_check_fails_on_a_stale_table(tables: ModuleType, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "README.md").write_text("<!-- table:r_sweep -->\nold\n<!-- /table -->\n",
                                        encoding="utf-8")
    monkeypatch.setattr(tables, "ROOT", tmp_path)
    monkeypatch.setattr(tables, "pages", lambda: [tmp_path / "README.md"])
    assert tables.main(["--check"]) == 1
    assert tables.main([]) == 0
    assert tables.main(["--check"]) == 0
    assert "| corpus | R = 0 |" in (tmp_path / "README.md").read_text(encoding="utf-8")


def test_formatting_helpers() -> None:
    assert _tables_base.pct(0.96154) == "96.2"
    assert _tables_base.num(11777.7) == "11,778"
    assert _tables_base.mib(524.0) == "524 MiB" and _tables_base.mib(2048.0) == "2.0 GiB"
    assert _tables_base.mean_std({"mean": 0.7719, "std": 0.0091}) == "0.772 ± 0.009"


def test_missing_results_file_is_named(tables: ModuleType, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tables_base, "RESULTS", tmp_path)
    with pytest.raises(FileNotFoundError, match="accuracy.json"):
        tables.TABLES["end_to_end"]()


def test_config_reference_lists_every_key(tables: ModuleType) -> None:
    from pydantic import BaseModel

    from xlnel.config import PipelineConfig

    text = tables.TABLES["config_reference"]()
    for section, field in PipelineConfig.model_fields.items():
        default = field.get_default(call_default_factory=True)
        keys = [f"{section}.{k}" for k in type(default).model_fields] \
            if isinstance(default, BaseModel) else [section]
        for key in keys:
            assert f"| `{key}` |" in text
    assert "| `dft.R` | float | `0.2` | [0, 1] |" in text
    assert "| `filter.threshold` | float \\| None | `null` | [0, 1] |" in text
    assert "| `linker.lexicon_rate` | float \\| None | `null` | (0, 1] |" in text
    assert "| `data.max_documents` | int \\| None | `null` | >= 1 |" in text
    # the top-level seed is the default of the stage seeds a config leaves out
    assert "the value of every stage seed the config leaves out" in text


def test_options_reference_gives_every_option_its_default_and_range(tables: ModuleType
                                                                     ) -> None:
    from xlnel.filtering.cross_encoder_options import CrossEncoderOptions
    from xlnel.filtering.gbdt_options import GbdtOptions
    from xlnel.linkers.dense import DenseOptions
    from xlnel.ner.crf import CrfTaggerOptions

    text = tables.TABLES["options_reference"]()
    for model in (GbdtOptions, CrossEncoderOptions, DenseOptions, CrfTaggerOptions):
        for name in model.model_fields:
            assert f"| `{name}` |" in text, (model.__name__, name)
    assert "| `epochs` | int | `3` | >= 1 |" in text
    assert "| `warmup_ratio` | float | `0.1` | [0, 1) |" in text
    assert "| `switch_threshold` | float \\| None | `0.95` | [-1, 1] |" in text
    assert "| `negatives` | float | `1.0` | (0, 1] |" in text


def test_figures_in_text_are_filled_from_results(tmp_path: Path) -> None:
    from benchmarks._figures import render_figures

    (tmp_path / "x.json").write_text('{"results": {"f1": 0.8807, "runs": [{"n": 2}, {"n": 3}],'
                                     ' "pool": 2674002}}', encoding="utf-8")
    text = ("F1 <!-- fig x.json results.f1 pct -->old<!-- /fig --> over "
            "<!-- fig x.json results.runs.0.n+results.runs.1.n num -->?<!-- /fig --> runs of "
            "<!-- fig x.json results.pool million -->?<!-- /fig -->.")
    out = render_figures(text, "page.md", tmp_path)
    assert out == ("F1 <!-- fig x.json results.f1 pct -->88.1<!-- /fig --> over "
                   "<!-- fig x.json results.runs.0.n+results.runs.1.n num -->5<!-- /fig --> runs "
                   "of <!-- fig x.json results.pool million -->2.67 million<!-- /fig -->.")
    assert render_figures(out, "page.md", tmp_path) == out
    assert render_figures("<!-- fig x.json results.f1 dpct -->?<!-- /fig -->", "page.md",
                          tmp_path) == "<!-- fig x.json results.f1 dpct -->+88.1<!-- /fig -->"
    with pytest.raises(KeyError, match="page.md: x.json: no 'results.f2'"):
        render_figures("<!-- fig x.json results.f2 pct -->1<!-- /fig -->", "page.md", tmp_path)
    with pytest.raises(KeyError, match="unknown figure format 'pc'"):
        render_figures("<!-- fig x.json results.f1 pc -->1<!-- /fig -->", "page.md", tmp_path)
    with pytest.raises(FileNotFoundError, match="y.json"):
        render_figures("<!-- fig y.json results.f1 pct -->1<!-- /fig -->", "page.md", tmp_path)
    with pytest.raises(KeyError, match="page.md: malformed figure marker"):  # no format
        render_figures("<!-- fig x.json results.f1 -->0<!-- /fig -->", "page.md", tmp_path)


@pytest.mark.parametrize("name,page", [("accuracy_variants", "accuracy-variants.md"),
                                       ("error_analysis", "error-analysis.md")])
def test_pages_written_by_their_benchmark_match_its_results(name: str, page: str) -> None:
    import importlib
    import json

    module = importlib.import_module(f"benchmarks.{name}")
    data = json.loads((ROOT / "benchmarks" / "results" / f"{name}.json").read_text("utf-8"))
    assert module.markdown(data["results"]) == (ROOT / "docs" / page).read_text("utf-8")
