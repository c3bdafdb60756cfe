from __future__ import annotations

import pytest

from xlnel.candidates.base import generator_class
from xlnel.errors import ConfigError
from xlnel.filtering.base import filter_class
from xlnel.registry import Registry


def test_builtins_resolve_and_unknown_names_list_the_choices():
    assert filter_class("xlnel.gbdt.v1").registered_name == "xlnel.gbdt.v1"
    assert generator_class("xlnel.tfidf_char.v1").registered_name == "xlnel.tfidf_char.v1"
    with pytest.raises(ConfigError, match=r"unknown filter 'nope'.*xlnel\.similarity\.v1"):
        filter_class("nope")


def test_register_needs_a_name():
    reg: Registry[type] = Registry("thing", [])

    class Nameless:
        pass

    with pytest.raises(TypeError, match="registered_name"):
        reg.register(Nameless)
