"""The README's examples run as written: its Python blocks against the embedded default
pipeline (trained once into a temporary cache), its config block through the validator."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from xlnel.config import PipelineConfig

README = Path(__file__).resolve().parent.parent / "README.md"


def blocks(language: str) -> list[str]:
    """The fenced code blocks of README.md in ``language``."""
    text = README.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


@pytest.fixture(scope="module")
def default_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("xlnel-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XLNEL_CACHE", str(cache))
        yield cache


def test_setup_commands_come_first() -> None:
    first = blocks("bash")[0].splitlines()
    assert first[0].startswith('pip install torch==2.13.0 . && xlnel link default --text "')
    assert first[1] == 'pip install torch==2.13.0 -e ".[neural,dev]" && python -m pytest -q'
    assert README.read_text(encoding="utf-8").index("```bash") < README.read_text(
        encoding="utf-8").index("```python")


def test_readme_is_short() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) < 200


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_python_examples_run(index: int, default_cache: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    code = blocks("python")[index]
    exec(compile(code, f"README.md python block {index + 1}", "exec"), {})
    if "print(" in code:
        assert "HP:" in capsys.readouterr().out


def test_config_example_validates() -> None:
    (config,) = blocks("yaml")
    assert PipelineConfig.model_validate(yaml.safe_load(config)).filter.name == "xlnel.gbdt.v1"
