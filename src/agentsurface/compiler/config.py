"""``[tool.agentsurface]`` in the app's ``pyproject.toml``: what the compiler imports.

[tool.agentsurface]
modules = ["myapp.surface"]              # imported under CPython; packages include submodules
contract = ".agentsurface/contract.json" # the committed contract (default shown)
python-path = ["."]                       # put on sys.path while importing (relative to the root)
files = ["index.html"]                    # static files `bundle` copies next to the runtime

[tool.agentsurface.external.acme-widgets]  # consent to an installed distribution's capabilities
digest = "sha256:…"                         # (see ``consent``)
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path, PurePosixPath
from typing import Any

from .._core.records import record
from .consent import Approval, parse_approvals
from .errors import CompileError, Problem

DEFAULT_CONTRACT = ".agentsurface/contract.json"
_MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


@record
class ProjectConfig:
    root: Path
    modules: tuple[str, ...]
    contract: str
    python_path: tuple[str, ...] = (".",)
    files: tuple[str, ...] = ()
    name: str = "app"
    approvals: Mapping[str, Approval] = field(default_factory=dict)

    @property
    def contract_path(self) -> Path:
        return self.root / self.contract

    @property
    def import_roots(self) -> list[Path]:
        return [(self.root / entry).resolve() for entry in self.python_path]


def _invalid(message: str) -> CompileError:
    return CompileError([Problem("invalid-config", message, "pyproject.toml [tool.agentsurface]")])


def _relative(value: Any, what: str) -> str:
    """A POSIX path inside the project: absolute paths would make the config machine-bound."""
    if not isinstance(value, str) or not value:
        raise _invalid(f"{what} must be a non-empty string, got {value!r}")
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        raise _invalid(f"{what} must be a relative POSIX path inside the project, got {value!r}")
    return str(path)


def _strings(table: dict[str, Any], key: str, default: tuple[str, ...]) -> tuple[str, ...]:
    value = table.get(key, list(default))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(f"{key} must be a list of strings, got {value!r}")
    return tuple(value)


def find_project_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` whose pyproject.toml has [tool.agentsurface]."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and "agentsurface" in _read(pyproject).get("tool", {}):
            return candidate
    raise _invalid(f"no pyproject.toml with a [tool.agentsurface] table at or above {start}")


def _read(pyproject: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise _invalid(f"cannot read {pyproject.name}: {exc}") from None


def load_config(root: Path) -> ProjectConfig:
    data = _read(root / "pyproject.toml")
    table = data.get("tool", {}).get("agentsurface")
    if not isinstance(table, dict):
        raise _invalid("pyproject.toml has no [tool.agentsurface] table")
    unknown = sorted(set(table) - {"modules", "contract", "python-path", "files", "name", "external"})
    if unknown:
        raise _invalid(f"unknown keys {unknown}")
    modules = _strings(table, "modules", ())
    if not modules:
        raise _invalid("modules must name at least one module")
    for module in modules:
        if not _MODULE_RE.fullmatch(module):
            raise _invalid(f"{module!r} is not a module name")
    name = table.get("name", data.get("project", {}).get("name", modules[0].split(".")[0]))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise _invalid(f"name must be a distribution name, got {name!r}")
    return ProjectConfig(
        root=root.resolve(),
        modules=modules,
        contract=_relative(table.get("contract", DEFAULT_CONTRACT), "contract"),
        python_path=tuple(_relative(p, "python-path entry") for p in _strings(table, "python-path", (".",))),
        files=tuple(_relative(f, "files entry") for f in _strings(table, "files", ())),
        name=name,
        approvals=parse_approvals(table.get("external")),
    )
