"""The raw side of a config, before validation: YAML files, their ``include`` keys and dotted
overrides (``candidates.threshold=0.5``), as nested dicts.

YAML itself keeps the last of two equal keys of a mapping; here a key given twice (in a file,
in a value, or among the overrides) is an error, so that no setting is silently dropped.
:func:`xlnel.config.load_config` validates the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from xlnel.errors import ConfigError

__all__ = ["DuplicateKeyError", "apply_overrides", "include_paths", "merge_configs",
           "parse_overrides", "read_yaml", "resolve_includes", "yaml_value"]

_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.YAMLError):
    """A YAML mapping gives one key twice (``line``: 1-based, of the second one)."""

    def __init__(self, key: Any, line: int, first: int) -> None:
        super().__init__(f"line {line}: the key {key!r} is given twice (first on line {first}); "
                         "give it once")
        self.key, self.line, self.first = key, line, first


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader refusing a mapping that gives one key twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:  # ``<<: *base`` keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise DuplicateKeyError(key, line, seen[key])
                seen[key] = line
            except TypeError:  # an unhashable key: the safe loader's own check refuses it
                break
        return super().construct_mapping(node, deep)


def yaml_value(text: str) -> Any:
    """``text`` read as YAML (safe: no objects are built), refusing duplicate keys.

    Raises:
        yaml.YAMLError: Invalid YAML, or a mapping giving a key twice
            (:class:`DuplicateKeyError`).
    """
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Turn ``["a.b=1", "c=x"]`` into a dict of dotted keys to YAML-parsed values.

    Raises:
        ConfigError: If an item has no ``=``, its key has an empty part (``a..b``), its
            value is not valid YAML, or a key is given twice.
    """
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"override {item!r} must look like key.path=value")
        if not all(part.strip() for part in key.split(".")):
            raise ConfigError(f"override {item!r}: the key {key!r} has an empty part; "
                              "write key.path=value")
        if key in given:
            raise ConfigError(f"override {key!r} is given twice ({given[key]!r} and "
                              f"{item!r}); give it once")
        try:
            out[key] = yaml_value(value) if value.strip() else None
        except yaml.YAMLError as e:
            raise ConfigError(f"override {item!r}: the value is not valid YAML ({e})") from e
        given[key] = item
    return out


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Set dotted keys in a nested dict (in place) and return it.

    An empty section (``linker:`` with nothing under it, read as ``None``) takes keys like
    an empty mapping.

    Raises:
        ConfigError: If a key passes through a value that is not a section, or sets a whole
            section after an earlier key set something inside it (that key would be lost).
    """
    done: list[str] = []
    for dotted, value in overrides.items():
        inside = [d for d in done if d.startswith(dotted + ".")]
        if inside:
            raise ConfigError(f"override {dotted!r} replaces the whole section after "
                              f"{inside[0]!r} set a key in it, which would be lost; give "
                              f"{dotted!r} first")
        node = raw
        parts = dotted.split(".")
        for part in parts[:-1]:
            if node.get(part) is None:
                node[part] = {}
            child = node[part]
            if not isinstance(child, dict):
                raise ConfigError(f"cannot set {dotted!r}: {part!r} is not a section")
            node = child
        node[parts[-1]] = value
        done.append(dotted)
    return raw


def read_yaml(path: Path) -> dict[str, Any]:
    """The top-level mapping of a YAML config file.

    Raises:
        FileNotFoundError: If there is no such file.
        ConfigError: Invalid YAML, a key given twice, an empty file, or a top level that is
            not a mapping; the message names the file (and the line where YAML gives one).
    """
    if not path.is_file():
        raise FileNotFoundError(f"config file not found: {path}")
    try:
        raw = yaml_value(path.read_text(encoding="utf-8"))
    except DuplicateKeyError as e:
        raise ConfigError(f"{path}, {e}") from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from e
    if raw is None:
        raise ConfigError(f"{path}: the file holds no settings; write {{}} for a config of "
                          "defaults")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping, got {type(raw).__name__}")
    return raw


def merge_configs(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``top`` laid over it: mappings merge key by key, anything else (lists
    included) is replaced by ``top``'s value. Neither argument is changed."""
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_configs(out[key], value)
        else:
            out[key] = value
    return out


def include_paths(value: Any, where: str) -> list[str]:
    """The files an ``include`` value names (a path or a list of paths).

    Raises:
        ConfigError: If ``value`` is neither.
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"{where}: include must be a path or a list of paths, got {value!r}")


def resolve_includes(raw: dict[str, Any], base_dir: Path, where: str,
                     seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """``raw`` laid over the files its ``include`` key names, in order (later files win).

    Relative include paths are read from ``base_dir``; included files may include others.

    Raises:
        FileNotFoundError: An included file does not exist.
        ConfigError: ``include`` is not a path or list of paths, or files include each other.
    """
    raw = dict(raw)
    merged: dict[str, Any] = {}
    for name in include_paths(raw.pop("include", []), where):
        path = (base_dir / name).resolve()
        if path in seen:
            chain = " -> ".join(str(p) for p in (*seen, path))
            raise ConfigError(f"{where}: configs include each other: {chain}")
        if not path.is_file():
            raise FileNotFoundError(f"{where}: included config not found: {path}")
        inner = resolve_includes(read_yaml(path), path.parent, str(path), (*seen, path))
        merged = merge_configs(merged, inner)
    return merge_configs(merged, raw)
