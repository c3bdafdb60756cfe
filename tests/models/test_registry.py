"""Tests of the model registry and of the cache root it builds under."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlnel.cache import cache_dir
from xlnel.errors import ConfigError
from xlnel.models import ModelRegistry, registered_models, resolve_model


def test_cache_dir_from_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"


def test_cache_dir_default_and_empty_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XLNEL_CACHE", raising=False)
    assert cache_dir() == tmp_path / ".cache" / "xlnel"
    monkeypatch.setenv("XLNEL_CACHE", "")
    assert cache_dir() == tmp_path / ".cache" / "xlnel"
    monkeypatch.setenv("XLNEL_CACHE", "~/elsewhere")
    assert cache_dir() == tmp_path / "elsewhere"


@pytest.mark.parametrize(
    "name", ["bert-base-multilingual-cased", "onlplab/alephbert-base", "/models/my-sapbert", "."]
)
def test_unknown_names_pass_through(name: str) -> None:
    assert resolve_model(name) == name


def test_e5_is_registered() -> None:
    assert "multilingual-e5-small" in registered_models()


class FakeBuilder:
    """Records its calls and writes a marker file, as a real builder writes a folder."""

    def __init__(self) -> None:
        self.calls: list[tuple[Path, bool]] = []

    def __call__(self, out_dir: Path, force: bool) -> Path:
        self.calls.append((out_dir, force))
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "config.json").write_text("{}")
        return out_dir


def test_registered_name_builds_into_the_cache_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("XLNEL_CACHE", str(tmp_path))
    registry, builder = ModelRegistry(), FakeBuilder()
    registry.register("tiny", builder)
    with caplog.at_level(logging.INFO, logger="xlnel.models.registry"):
        first = registry.resolve("tiny")
    assert first == str(tmp_path / "models" / "tiny")
    assert "Building registered model 'tiny'" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="xlnel.models.registry"):
        assert registry.resolve("tiny") == first
    assert "Building" not in caplog.text
    registry.build("tiny", force=True)
    assert [force for _, force in builder.calls] == [False, False, True]


def test_register_rejects_bad_and_taken_names() -> None:
    registry = ModelRegistry()
    registry.register("a", FakeBuilder())
    with pytest.raises(ConfigError, match="already registered"):
        registry.register("a", FakeBuilder())
    registry.register("a", FakeBuilder(), overwrite=True)
    for bad in ("", "x/y", " a"):
        with pytest.raises(ConfigError, match="not allowed"):
            registry.register(bad, FakeBuilder())
    with pytest.raises(ConfigError, match="registered: a"):
        registry.build("b")
