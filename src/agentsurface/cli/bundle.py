"""``agentsurface bundle --out DIR``: the app plus the offline browser runtime, as static files.

    DIR/agentsurface.js          the embed script (boots Pyodide from ./dist)
    DIR/dist/pyodide/             Pyodide, with a pyodide-lock.json that also lists the app's wheel
    DIR/dist/pyscript/            PyScript, when a bundled file mentions it
    DIR/dist/wheels/              agentsurface, its dependencies, and <app>-<version>-py3-none-any.whl
                                  (only the lock's closure of what the pages load: bundle_prune)
    DIR/contract.json             the committed, reviewed contract (also inside the app's wheel,
                                  where the page reads it: authority_from_bundle())
    DIR/<files>                   the app's static files ([tool.agentsurface] files)

The app's Python (the top-level packages of its configured modules) ships as a wheel built with
fixed timestamps and listed in the lock with its sha256, so a page loads it by name
(``data-packages="<app>"``), integrity-checked. A contract that does not match the source is
refused: bundle ships only what was reviewed. Idempotent: the same inputs give the same bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tomllib
import zipfile
from pathlib import Path
from typing import TextIO

from .._core.errors import AgentSurfaceError
from .._runtime_build.build import (
    BuildError,
    RuntimeLayout,
    build,
    source_checkout,
    sync_file,
    sync_tree,
)
from .._runtime_build.lock import canonical, lock_entry
from .._runtime_build.memory_snapshot import MEMORY_INFO
from .._runtime_build.page_bytecode import asks_compiled, precompile_page
from .._runtime_build.precompile import PrecompileError, record_line
from .._runtime_build.source import cached_runtime
from ..compiler.config import ProjectConfig
from ..compiler.errors import CompileError
from ..compiler.load import BUNDLED_CONTRACT
from .bundle_prune import page_needs, runtime_filter
from .commands import compile_at
from .external import consent_failures, contributors_of
from .page_check import missing_app_package, wrong_references

RUNTIME_PARTS = ("pyodide", "pyscript", "wheels")
EMBED_SCRIPT = "agentsurface.js"


class BundleError(AgentSurfaceError):
    """The bundle cannot be written (no runtime, stale contract, compile failure, missing file)."""


def _runtime(given: Path | None, cache: Path | None, offline: bool, memory_snapshot: bool = False) -> Path:
    """A built runtime directory: ``agentsurface.js`` beside ``dist/``. Without ``--runtime`` it is
    built in the source checkout's web/ (an editable install) or, from a pip install or with
    ``--cache``, in a per-user cache directory (runtime_source); with ``memory_snapshot`` (a page
    asks for it), with the memory snapshot built too."""
    if given is None:
        checkout = source_checkout()
        try:
            if checkout is not None and cache is None:
                layout = RuntimeLayout(project=checkout, web=checkout / "web")
                build(layout, offline=offline, memory_snapshot=memory_snapshot)
                given = layout.web
            else:
                given = cached_runtime(cache, offline, memory_snapshot)
        except BuildError as exc:
            raise BundleError(f"building the runtime failed: {exc}") from None
    for required in (given / EMBED_SCRIPT, *(given / "dist" / part for part in RUNTIME_PARTS)):
        if not required.exists():
            raise BundleError(f"the runtime at {given} has no {required.relative_to(given)}")
    return given


def _version(root: Path) -> str:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8")).get("project", {})
    version = project.get("version", "0.0.0")
    return str(version)


def _app_files(config: ProjectConfig) -> dict[str, bytes]:
    """The app's packages (every file but caches), keyed by their path inside the wheel."""
    files: dict[str, bytes] = {}
    for package in sorted({m.split(".", 1)[0] for m in config.modules}):
        for base in config.import_roots:
            directory, module = base / package, base / f"{package}.py"
            if directory.is_dir():
                for path in sorted(directory.rglob("*")):
                    if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                        files[path.relative_to(base).as_posix()] = path.read_bytes()
                break
            if module.is_file():
                files[module.name] = module.read_bytes()
                break
        else:
            raise BundleError(f"package {package!r} not found under {list(config.python_path)}")
    return files


def _app_wheel(config: ProjectConfig, version: str, contract: bytes) -> tuple[str, bytes]:
    dist = re.sub(r"[-_.]+", "_", config.name)
    dist_info = f"{dist}-{version}.dist-info"
    files = _app_files(config)
    # The reviewed contract rides in the integrity-checked wheel: authority_from_bundle() reads it.
    files[f"{dist_info}/{BUNDLED_CONTRACT}"] = contract
    top = sorted({name.split("/", 1)[0].removesuffix(".py") for name in files})
    files[f"{dist_info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {config.name}\nVersion: {version}\n".encode()
    )
    files[f"{dist_info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: agentsurface bundle\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[f"{dist_info}/top_level.txt"] = ("\n".join(top) + "\n").encode()
    record = [record_line(name, data) for name, data in files.items()]
    files[f"{dist_info}/RECORD"] = ("\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():  # fixed timestamps: the same bytes on every build
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return f"{dist}-{version}-py3-none-any.whl", buffer.getvalue()


def _check_pages(config: ProjectConfig, log: TextIO) -> None:
    """Every copied page loads the runtime from where the bundle puts it (cli/page_check), and
    says so on ``log`` when a page loads it without the app's package."""
    problems = []
    for name in config.files:
        source = config.root / name
        if source.suffix.lower() in (".html", ".htm") and source.is_file():
            text = source.read_text(encoding="utf-8", errors="replace")
            problems += wrong_references(Path(name).as_posix(), text)
            warning = missing_app_package(Path(name).as_posix(), text, config.name)
            if warning is not None:
                print(warning, file=log)
    if problems:
        raise BundleError("; ".join(map(str, problems)))


def _static_files(config: ProjectConfig) -> dict[str, bytes]:
    """The app's static files that exist (a missing one is reported when it is copied)."""
    return {
        name: (config.root / name).read_bytes() for name in config.files if (config.root / name).is_file()
    }


def _precompile_pages(config: ProjectConfig, out: Path) -> None:
    """The bytecode of the data-files of every copied page whose loader tag says data-compiled,
    compiled with the bundle's own Pyodide (``agentsurface precompile`` on the copy)."""
    for name in config.files:
        page = out / name
        if page.suffix.lower() in (".html", ".htm") and asks_compiled(page.read_text(encoding="utf-8", errors="replace")):
            try:
                precompile_page(page, out / "dist" / "pyodide")
            except PrecompileError as exc:
                raise BundleError(f"{name} asks for data-compiled: {exc}") from None


def _zip_info(web: Path) -> tuple[str | None, str | None]:
    """The file names the runtime's agentsurface-zip.json gives, if it has one: agentsurface's
    zip in wheels/ (``file``) and the compiled stdlib zip (``stdlib``), each None when absent."""
    path = web / "dist" / "pyodide" / "agentsurface-zip.json"
    info = json.loads(path.read_text()) if path.is_file() else {}
    zip_file, stdlib = (str(info.get(key, "")).rsplit("/", 1)[-1] or None for key in ("file", "stdlib"))
    return zip_file, stdlib


def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return True


def bundle(
    root: Path,
    out: Path,
    *,
    runtime: Path | None,
    offline: bool,
    log: TextIO,
    cache: Path | None = None,
) -> None:
    try:
        compiled = compile_at(root)
    except CompileError as exc:
        raise BundleError(
            "the contract cannot be proven complete: " + "; ".join(map(str, exc.problems))
        ) from None
    config = compiled.config
    committed = config.contract_path.read_bytes() if config.contract_path.is_file() else None
    if committed != compiled.data:
        state = "missing" if committed is None else "stale"
        raise BundleError(f"{config.contract} is {state}; run `agentsurface snapshot` and review it first")
    pending = consent_failures(compiled.document, contributors_of(compiled.document))
    if pending:  # the same gate as check: a bundle never ships an unapproved contribution
        raise BundleError("; ".join(pending))
    _check_pages(config, log)  # before any work: a page that would 404 on the runtime fails now
    needs = page_needs(_static_files(config))
    web = _runtime(runtime, cache, offline, needs.memory_snapshot)
    if needs.memory_snapshot and not (web / "dist" / "pyodide" / MEMORY_INFO).is_file():
        raise BundleError(f"a page asks for data-memory-snapshot, and the runtime at {web} has none")
    out.mkdir(parents=True, exist_ok=True)
    lock = json.loads((web / "dist" / "pyodide" / "pyodide-lock.json").read_text())
    zip_file, stdlib = _zip_info(web)
    try:
        for part in RUNTIME_PARTS:  # only what the pages load (bundle_prune)
            keep = runtime_filter(part, needs, lock["packages"], config.name, zip_file, stdlib)
            if keep is not None:
                sync_tree(web / "dist" / part, out / "dist" / part, keep)
        sync_file(web / EMBED_SCRIPT, out / EMBED_SCRIPT)
    except BuildError as exc:
        raise BundleError(str(exc)) from None

    wheel_name, wheel = _app_wheel(config, _version(root), compiled.data)
    prefix = re.sub(r"[-_.]+", "_", config.name) + "-"
    for old in (out / "dist" / "wheels").glob(f"{prefix}*.whl"):
        if old.name != wheel_name:
            old.unlink()
    wheel_path = out / "dist" / "wheels" / wheel_name
    _write_if_changed(wheel_path, wheel)

    entry = lock_entry(wheel_path)
    if canonical(entry["name"]) in lock["packages"]:
        raise BundleError(
            f"the app's name {config.name!r} collides with a runtime package; set name in [tool.agentsurface]"
        )
    lock["packages"][canonical(entry["name"])] = entry
    lock["packages"] = dict(sorted(lock["packages"].items()))
    _write_if_changed(
        out / "dist" / "pyodide" / "pyodide-lock.json", (json.dumps(lock, indent=1) + "\n").encode()
    )
    _write_if_changed(out / "contract.json", compiled.data)

    for name in config.files:
        source = config.root / name
        if not source.is_file():
            raise BundleError(f"{name} (listed in [tool.agentsurface] files) does not exist")
        _write_if_changed(out / name, source.read_bytes())
    _precompile_pages(config, out)
    digest = hashlib.sha256(wheel).hexdigest()[:12]
    print(f"bundled {config.name} ({wheel_name}, sha256 {digest}…) and the runtime into {out}", file=log)
