"""The JS-boundary helpers on CPython (JS null itself is checked in the page: e2e/test_console_hostile.py)."""

from __future__ import annotations

import importlib
import sys

import pytest

from agentsurface.browser.jsvalues import is_nullish, js_get, js_or_none


class Holder:
    present = "x"
    empty = ""
    nothing = None

    @property
    def broken(self) -> str:
        raise RuntimeError("getter threw")


def test_none_is_nullish_and_falsy_values_are_not() -> None:
    assert is_nullish(None)
    for value in (0, "", False, [], {}, object()):
        assert not is_nullish(value)


def test_js_or_none_keeps_values_and_maps_nullish_to_none() -> None:
    marker = object()
    assert js_or_none(marker) is marker
    assert js_or_none("") == ""
    assert js_or_none(None) is None


def test_js_get_reads_present_attributes_and_none_for_missing_null_or_throwing() -> None:
    holder = Holder()
    assert js_get(holder, "present") == "x"
    assert js_get(holder, "empty") == ""
    assert js_get(holder, "nothing") is None
    assert js_get(holder, "absent") is None
    assert js_get(holder, "broken") is None
    assert js_get(None, "present") is None


def test_the_browser_package_imports_without_js_and_names_its_lazy_exports() -> None:
    assert "js" not in sys.modules  # CPython: the helpers must not need the browser
    browser = importlib.import_module("agentsurface.browser")
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        browser.nope  # noqa: B018
