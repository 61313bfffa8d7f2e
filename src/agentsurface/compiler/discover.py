"""Find every capability declaration an app's modules make at import time.

The compiler imports the configured modules under CPython (packages with all their submodules),
in isolation from modules already loaded, and looks at every component and procedure contract
that exists afterwards and did not exist before. Each one must be *static*:

- an ``AgentComponent`` subclass with ``type=`` must come from a ``class`` statement at the top
  level of a module of the app, and be bound in that module under its own name;
- a ``ComponentContract`` or ``ProcedureContract`` object must be assigned at the top level of a
  module of the app by a direct constructor call: ``NAME = ProcedureContract(...)``;
- a procedure declared by an app's own route (``agentsurface.fastapi.procedure``,
  ``agentsurface.django.procedure``) must decorate a ``def`` at the top level of its module,
  bound there under its own name; it is recorded as that function.

Anything else is *dynamic* and fails completeness instead of being dropped: a class defined
inside a function, a class made by ``type(...)``, a contract returned by a factory function or
built in a loop or comprehension, a contract only reachable through a container. A module that
does not import fails too.

Every declaration is attributed to who ships it. One written in the app's packages is the app's
own. One written in a module of an installed distribution (its RECORD lists the file, or it is an
editable install of that distribution) is *contributed* by that distribution, held to the same
static rules, and recorded with the distribution's name and version: whether the app consents to
it is decided apart (``consent``), never by discovery. A declaration outside the app's packages
that no installed distribution ships is code of the project the config does not name, and fails
as *external* (add its module to ``modules``). A class defined in a function that nobody calls at import time declares nothing; if it
is registered later, the authority built from the contract refuses it as unknown.

"The app's packages" are the top-level packages of the configured modules.
"""

from __future__ import annotations

import ast
import gc
import importlib
import pkgutil
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from .._core.contracts import ComponentContract, ProcedureContract
from .._core.contracts.authoring import AgentComponent
from .._core.contracts.external import normalize_distribution
from .._core.contracts.procedures import route_contract
from .._core.records import record
from .attribution import DistributionIndex, Shipper, is_within
from .config import ProjectConfig
from .errors import CompileError, Problem

Contract = ComponentContract | ProcedureContract
_CONSTRUCTORS = {"ComponentContract", "ProcedureContract"}


@record
class Declaration:
    """A static declaration and where it is written (module, top-level name, project file)."""

    contract: Contract
    module: str
    name: str
    file: str
    distribution: Shipper | None = None  # the installed distribution that contributes it, if any
    route: bool = False  # declared by decorating an app's route (the function ``name``)


def _live_contracts() -> set[Contract]:
    gc.collect()
    # type(), not isinstance(): isinstance asks a proxy for its __class__, which sets a lazy
    # object up (Django's settings, its storages), and a proxy is never a contract.
    kinds = (ComponentContract, ProcedureContract)
    return {o for o in gc.get_objects() if issubclass(type(o), kinds)}


def _component_classes() -> dict[Contract, type[AgentComponent]]:
    """Every AgentComponent subclass that defines its own contract, by contract."""
    found: dict[Contract, type[AgentComponent]] = {}
    stack = list(AgentComponent.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        own = cls.__dict__.get("contract")
        if isinstance(own, ComponentContract):
            found[own] = cls
    return found


def _top_package(module: str) -> str:
    return module.split(".", 1)[0]


@contextmanager
def _isolated_imports(config: ProjectConfig) -> Iterator[None]:
    """Import the app afresh from ``config.root`` and leave ``sys.modules``/``sys.path`` as found."""
    packages = {_top_package(m) for m in config.modules}
    saved_path = list(sys.path)
    saved_modules = dict(sys.modules)
    for name in list(sys.modules):
        if _top_package(name) in packages:
            del sys.modules[name]
    sys.path[:0] = [str(p) for p in config.import_roots]
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name in list(sys.modules):
            if name not in saved_modules:
                del sys.modules[name]
        sys.modules.update(saved_modules)


def _import_targets(config: ProjectConfig, problems: list[Problem]) -> None:
    for name in config.modules:
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # a module that runs sys.exit() is a failed import as well
            problems.append(Problem("import-failed", _failure(exc), name))
            continue
        if hasattr(module, "__path__"):  # a package: its submodules are part of the app too
            for info in pkgutil.walk_packages(module.__path__, prefix=f"{name}."):
                try:
                    importlib.import_module(info.name)
                except BaseException as exc:
                    problems.append(Problem("import-failed", _failure(exc), info.name))


def _failure(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"the module does not compile: {exc}"
    # The innermost frame in a real file (importlib's own frames are '<frozen ...>').
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<")]
    line = f" (line {frames[-1].lineno} of {Path(frames[-1].filename).name})" if frames else ""
    return f"the module does not import under CPython: {type(exc).__name__}: {exc}{line}"


class _AppModules:
    """The app's imported modules, with their top-level statements parsed once."""

    def __init__(self, config: ProjectConfig, preloaded: set[str]) -> None:
        self.root = config.root
        self.packages = {_top_package(m) for m in config.modules}
        self.project = normalize_distribution(config.name)
        self.preloaded = preloaded
        self.index = DistributionIndex()
        self._trees: dict[str, tuple[set[str], set[str], set[str]] | None] = {}

    def shipper(self, module: ModuleType | None, name: str) -> Shipper | None:
        """The installed distribution (not the project itself) that ships a module of another package."""
        if module is None:
            return None
        file = getattr(module, "__file__", None)
        found = self.index.shipper(name, file)
        if found is None or found.name == self.project:
            return None
        if found.editable and file and is_within(Path(file), self.root):
            return None  # a package of this checkout installed editable: the project's own code
        return found

    def others(self) -> list[ModuleType]:
        """Modules of other packages that the app's import brought in (where dependencies declare)."""
        return [
            m
            for n, m in sorted(sys.modules.items())
            if n not in self.preloaded and not self.owns(n) and isinstance(m, ModuleType)
        ]

    def external_file(self, module: ModuleType) -> str:
        """A contributed module's path inside its distribution (never where pip put it)."""
        leaf = "/__init__.py" if hasattr(module, "__path__") else ".py"
        return module.__name__.replace(".", "/") + leaf

    def owns(self, module: str) -> bool:
        return _top_package(module) in self.packages

    def modules(self) -> list[ModuleType]:
        return [m for n, m in sorted(sys.modules.items()) if self.owns(n) and isinstance(m, ModuleType)]

    def file(self, module: ModuleType) -> str:
        path = Path(getattr(module, "__file__", "") or "").resolve()
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:  # outside the project root (e.g. a python-path entry above it)
            return module.__name__.replace(".", "/") + ".py"

    def top_level(self, module: ModuleType) -> tuple[set[str], set[str], set[str]]:
        """(names of top-level classes, names assigned a contract constructor call at top level,
        names of top-level functions)."""
        cached = self._trees.get(module.__name__)
        if cached is None:
            cached = _scan(getattr(module, "__file__", None))
            self._trees[module.__name__] = cached
        return cached


def _scan(filename: str | None) -> tuple[set[str], set[str], set[str]]:
    classes: set[str] = set()
    constructed: set[str] = set()
    functions: set[str] = set()
    if not filename or not filename.endswith(".py"):
        return classes, constructed, functions
    tree = ast.parse(Path(filename).read_text(encoding="utf-8"), filename)
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_constructor(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            constructed.update(t.id for t in targets if isinstance(t, ast.Name))
    return classes, constructed, functions


def _is_constructor(value: ast.expr | None) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name in _CONSTRUCTORS


def _outside(app: _AppModules, where: str) -> Problem:
    return Problem(
        "external-declaration",
        f"declared outside the app's packages {sorted(app.packages)} in code no installed "
        "distribution ships; add its module to [tool.agentsurface] modules",
        where,
    )


def _locate_class(cls: type, app: _AppModules) -> Declaration | Problem:
    where = f"{cls.__module__}:{cls.__qualname__}"
    shipper = None
    if not app.owns(cls.__module__):
        shipper = app.shipper(sys.modules.get(cls.__module__), cls.__module__)
    if shipper is None and not app.owns(cls.__module__):
        return _outside(app, where)
    if "<locals>" in cls.__qualname__:
        return Problem(
            "dynamic-declaration",
            "component class defined inside a function; declare it at the top level of its module",
            where,
        )
    module = sys.modules.get(cls.__module__)
    if module is None or cls.__qualname__ not in app.top_level(module)[0]:
        return Problem(
            "dynamic-declaration",
            "component class not created by a top-level class statement (e.g. made with type()); "
            "write it as a class statement",
            where,
        )
    if getattr(module, cls.__qualname__, None) is not cls:
        return Problem(
            "dynamic-declaration",
            "the module's name for this class is bound to something else (redefined or replaced)",
            where,
        )
    if shipper is not None:
        return Declaration(
            cls.contract, module.__name__, cls.__qualname__, app.external_file(module), shipper
        )
    return Declaration(cls.contract, module.__name__, cls.__qualname__, app.file(module))


def _locate_instance(contract: Contract, app: _AppModules) -> Declaration | Problem:
    for module in app.modules():
        _, constructed, functions = app.top_level(module)
        for name, value in sorted(vars(module).items()):
            if value is contract and name in constructed:
                return Declaration(contract, module.__name__, name, app.file(module))
            if (
                name in functions
                and route_contract(value) is contract
                and getattr(value, "__qualname__", None) == name
                and getattr(value, "__module__", None) == module.__name__
            ):
                return Declaration(contract, module.__name__, name, app.file(module), route=True)
    for module in app.others():
        if not any(value is contract for value in vars(module).values()):
            continue
        constructed = app.top_level(module)[1]
        for name, value in sorted(vars(module).items()):
            if value is contract and name in constructed:
                shipper = app.shipper(module, module.__name__)
                if shipper is None:
                    return _outside(app, f"{module.__name__}:{name}")
                return Declaration(contract, module.__name__, name, app.external_file(module), shipper)
    kind = type(contract).__name__
    return Problem(
        "dynamic-declaration",
        f"{kind} {contract.id!r} was built at import time where the compiler cannot locate it "
        f"(a function, loop, comprehension or container); write NAME = {kind}(...) at the top "
        "level of a module of the app, or decorate a top-level route function",
        contract.id,
    )


def discover(config: ProjectConfig) -> list[Declaration]:
    """Import the app and return its declarations sorted by id, or raise CompileError."""
    problems: list[Problem] = []
    before = _live_contracts()
    with _isolated_imports(config):
        preloaded = set(sys.modules)
        _import_targets(config, problems)
        app = _AppModules(config, preloaded)
        classes = _component_classes()
        found: dict[str, Declaration] = {}
        for contract in sorted(_live_contracts() - before, key=lambda c: (c.id, type(c).__name__)):
            cls = classes.get(contract)
            located = _locate_class(cls, app) if cls is not None else _locate_instance(contract, app)
            if isinstance(located, Problem):
                problems.append(located)
                continue
            other = found.get(contract.id)
            if other is not None:
                problems.append(
                    Problem(
                        "duplicate-declaration",
                        f"{contract.id!r} is declared twice: {other.module}:{other.name} and "
                        f"{located.module}:{located.name}",
                        contract.id,
                    )
                )
                continue
            found[contract.id] = located
        before.clear()
    if problems:
        raise CompileError(problems)
    return [found[key] for key in sorted(found)]
