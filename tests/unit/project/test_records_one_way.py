"""Records are made one way: every data class of the package is made by
``agentsurface._core.records.record`` (which picks its strategy), never by ``dataclasses`` directly,
and no module calls a private name of the standard library except through ``agentsurface._compat``.

Two checks, since neither alone sees everything: the source of every module (the browser's too,
which CPython cannot import), and every class of every module CPython can import (a data class
made some other way, e.g. by ``make_dataclass`` or a decorator under another name)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import agentsurface
from agentsurface._core.records import record, strategy_of

PACKAGE = Path(agentsurface.__file__).resolve().parent
RECORDS = PACKAGE / "_core" / "records.py"
COMPAT = PACKAGE / "_compat.py"
BROWSER_ONLY = ("js", "pyodide", "pyodide_js")  # what a module of agentsurface.browser imports


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text(), str(path))


def dataclasses_made_directly(tree: ast.Module) -> list[int]:
    """Lines where a module makes a data class without ``record``: ``dataclass`` (however it was
    imported: ``dataclass``, ``dataclasses.dataclass``, or a name bound to it) or ``make_dataclass``."""
    aliases = {"dataclass", "make_dataclass"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "dataclasses":
            aliases |= {a.asname for a in node.names if a.name in ("dataclass", "make_dataclass") and a.asname}
    lines = []
    for node in ast.walk(tree):
        named = isinstance(node, ast.Name) and node.id in aliases and isinstance(node.ctx, ast.Load)
        if named or (isinstance(node, ast.Attribute) and node.attr in ("dataclass", "make_dataclass")):
            lines.append(node.lineno)
    return sorted(lines)


def private_stdlib_names(tree: ast.Module) -> list[str]:
    """``module._name`` and ``from module import _name`` for a module of the standard library
    (dunders aside: ``__dict__``, ``__name__``... are public)."""
    stdlib = sys.stdlib_module_names
    bound: dict[str, str] = {}  # local name -> stdlib module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in stdlib:
                    bound[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            if top in stdlib:
                if any(p.startswith("_") and not p.startswith("__") for p in node.module.split(".")):
                    found.append(f"{node.lineno}: from {node.module} import ...")
                found += [
                    f"{node.lineno}: from {node.module} import {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")):
            continue
        base = node.value
        while isinstance(base, ast.Attribute) and not base.attr.startswith("_"):
            base = base.value  # asyncio.events._x: the root is asyncio
        if isinstance(base, ast.Name) and base.id in bound:
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_every_data_class_is_written_with_record() -> None:
    made_directly = {
        name: lines for name, tree in _sources() if (lines := dataclasses_made_directly(tree))
    }
    assert made_directly == {"agentsurface/_core/records.py": made_directly.get("agentsurface/_core/records.py")}
    assert made_directly["agentsurface/_core/records.py"]  # the one place that calls dataclasses


def test_every_data_class_of_the_package_was_made_by_record() -> None:
    seen: list[type] = []
    for info in pkgutil.walk_packages(agentsurface.__path__, "agentsurface."):
        try:
            module = importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            assert info.name.startswith("agentsurface.browser.") and exc.name in BROWSER_ONLY, exc
            continue
        stack = [value for value in vars(module).values() if isinstance(value, type)]
        while stack:
            cls = stack.pop()
            if cls.__module__ != module.__name__:
                continue
            stack += [value for value in vars(cls).values() if isinstance(value, type)]
            if dataclasses.is_dataclass(cls) and "__dataclass_fields__" in vars(cls):
                seen.append(cls)
    assert len(seen) > 100  # the walk found the package's records
    assert [c.__qualname__ for c in seen if strategy_of(c) is None] == []


def test_no_module_calls_a_private_name_of_the_standard_library_but_compat() -> None:
    found = {
        name: names for name, tree in _sources() if (names := private_stdlib_names(tree)) and name != "agentsurface/_compat.py"
    }
    assert found == {}


# The checks themselves: each catches what it is for.


@pytest.mark.parametrize(
    "source",
    [
        "from dataclasses import dataclass\n@dataclass\nclass A:\n    x: int\n",
        "import dataclasses\n@dataclasses.dataclass(frozen=True)\nclass A:\n    x: int\n",
        "from dataclasses import dataclass as dc\n@dc(slots=True)\nclass A:\n    x: int\n",
        "import dataclasses\nA = dataclasses.make_dataclass('A', ['x'])\n",
    ],
)
def test_the_source_check_sees_a_plain_dataclass(source: str) -> None:
    assert dataclasses_made_directly(ast.parse(source))


def test_the_source_check_lets_record_and_the_dataclasses_helpers_be() -> None:
    source = (
        "import dataclasses\nfrom dataclasses import field, fields\nfrom .records import record\n"
        "@record(hot=True)\nclass A:\n    x: list[int] = field(default_factory=list)\n"
        "names = [f.name for f in fields(A)] + [dataclasses.is_dataclass(A)]\n"
    )
    assert dataclasses_made_directly(ast.parse(source)) == []


@pytest.mark.parametrize(
    "source",
    [
        "import asyncio\nasyncio.events._get_running_loop()\n",
        "import asyncio\nasyncio._set_running_loop(None)\n",
        "import typing as t\nt._GenericAlias\n",
        "from importlib._bootstrap_external import _code_to_hash_pyc\n",
        "from inspect import _empty\n",
    ],
)
def test_the_private_name_check_sees_each_form(source: str) -> None:
    assert private_stdlib_names(ast.parse(source))


def test_the_private_name_check_lets_public_names_and_our_own_be() -> None:
    source = (
        "import asyncio, dataclasses\nfrom .._compat import running_loop_or_none\n"
        "asyncio.get_running_loop\ndataclasses.__dict__\nself._loop._ready\nregistry._holders\n"
    )
    assert private_stdlib_names(ast.parse(source)) == []


def test_the_class_walk_sees_a_plain_dataclass() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Plain:
        x: int

    @record
    class Made:
        x: int

    assert strategy_of(Plain) is None and strategy_of(Made) == "frozen slots"
