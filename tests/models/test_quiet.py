"""transformers' own progress bars stay off when xlnel loads and saves models."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from xlnel.config import FilterConfig  # noqa: E402
from xlnel.filtering.cross_encoder import CrossEncoderFilter  # noqa: E402
from xlnel.models.quiet import no_progress_bars  # noqa: E402
from xlnel.models.testing import tiny_bert  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread")


def test_the_setting_is_restored() -> None:
    hf_logging = transformers.utils.logging
    assert hf_logging.is_progress_bar_enabled()
    with no_progress_bars():
        assert not hf_logging.is_progress_bar_enabled()
    assert hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # a caller who turned them off keeps them off
    try:
        with no_progress_bars():
            pass
        assert not hf_logging.is_progress_bar_enabled()
    finally:
        hf_logging.enable_progress_bar()


def test_a_cross_encoder_builds_saves_and_loads_without_bars(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    model = tiny_bert(tmp_path / "bert", ["fever", "aspirin"], num_labels=1)
    config = FilterConfig(name="xlnel.cross_encoder.v1",
                          options={"model": str(model), "device": "cpu"})
    capfd.readouterr()
    built = CrossEncoderFilter(config, "en").build_model()
    built.save(tmp_path / "filter")
    CrossEncoderFilter.load(tmp_path / "filter", config, "en")
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "Writing model shards" not in err
