"""The runtime for `agentsurface bundle` without a source checkout: the runtime's sources shipped in
the wheel, built in a per-user cache keyed by the version, with our own wheel repacked from the
installed distribution (there is no source tree to ``pip wheel``).

    <cache>/agentsurface.js, package.json, package-lock.json   copied from the installed package
    <cache>/node_modules/                                       npm ci of the pins (first run only)
    <cache>/dist/                                               what runtime_build.build() writes

The default cache is ``$XDG_CACHE_HOME/agentsurface/runtime-<version>`` (``~/.cache`` when unset).
"""

from __future__ import annotations

import importlib.metadata
import io
import os
import re
import zipfile
from email.parser import Parser
from pathlib import Path

from .build import BuildError, RuntimeLayout, build, npm_is_current, say, source_checkout
from .precompile import DATACLASS_CODE_MEMBER, record_line

DISTRIBUTION = "agentsurface"
# What the runtime build reads from web/; pyproject.toml's force-include ships the same names.
ASSETS = ("agentsurface.js", "package.json", "package-lock.json")
SHIPPED = Path(__file__).resolve().parent / "runtime_assets"
# Written by the installer, not part of the wheel it installed.
INSTALLER_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}
WHEEL_TAG = "py3-none-any"
EPOCH = (2020, 1, 1, 0, 0, 0)


def runtime_assets() -> Path | None:
    """The directory holding the runtime's sources: the installed package's, or a checkout's web/."""
    if all((SHIPPED / name).is_file() for name in ASSETS):
        return SHIPPED
    checkout = source_checkout()
    return checkout / "web" if checkout is not None else None


def default_cache(version: str) -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"  # XDG: relative = unset
    return base / "agentsurface" / f"runtime-{version}"


def _copy_assets(source: Path, web: Path) -> None:
    web.mkdir(parents=True, exist_ok=True)
    for name in ASSETS:
        data, target = (source / name).read_bytes(), web / name
        if not target.is_file() or target.read_bytes() != data:
            target.write_bytes(data)


def installed_files() -> tuple[str, dict[str, bytes]]:
    """The installed distribution as a wheel's contents: (wheel file name, archive name -> bytes),
    without bytecode, scripts the installer generated, or the installer's own records."""
    dist = importlib.metadata.distribution(DISTRIBUTION)
    files: dict[str, bytes] = {}
    for entry in dist.files or []:
        parts = entry.parts
        if parts[0] == ".." or "__pycache__" in parts or entry.suffix == ".pyc":
            continue
        if parts[0].endswith(".dist-info") and parts[-1] in INSTALLER_FILES:
            continue
        files[entry.as_posix()] = Path(str(dist.locate_file(entry))).read_bytes()
    if "agentsurface/__init__.py" not in files:
        raise BuildError(
            f"the installed {DISTRIBUTION} has no package files to repack (an editable install?); "
            "run bundle from its source checkout or pass --runtime DIR"
        )
    stem = f"{re.sub(r'[-_.]+', '_', dist.metadata['Name']).lower()}-{dist.version}"
    wheel_meta = files.get(f"{stem}.dist-info/WHEEL")
    if wheel_meta is None:
        raise BuildError(f"the installed {DISTRIBUTION} has no {stem}.dist-info/WHEEL")
    tags = Parser().parsestr(wheel_meta.decode()).get_all("Tag") or []
    if WHEEL_TAG not in tags:
        raise BuildError(f"the installed {DISTRIBUTION} is not a pure wheel ({tags})")
    record = [record_line(name, data) for name, data in sorted(files.items())]
    files[f"{stem}.dist-info/RECORD"] = ("\n".join([*record, f"{stem}.dist-info/RECORD,,"]) + "\n").encode()
    return f"{stem}-{WHEEL_TAG}.whl", files


def _holds(wheel: Path, files: dict[str, bytes]) -> bool:
    """Whether ``wheel`` is these files plus only the bytecode precompile added (the pycs and the
    records' generated code, and its RECORD)."""
    added = (".pyc", ".dist-info/RECORD", DATACLASS_CODE_MEMBER)
    try:
        with zipfile.ZipFile(wheel) as archive:
            found = {name: archive.read(name) for name in archive.namelist() if not name.endswith(added)}
    except (OSError, zipfile.BadZipFile):
        return False
    return found == {name: data for name, data in files.items() if not name.endswith(added)}


def repack_installed(layout: RuntimeLayout) -> Path:
    """Our wheel, rebuilt from the installed distribution with fixed timestamps and a fresh RECORD;
    a cached copy with the same files (bytecode added by precompile aside) is kept as it is."""
    name, files = installed_files()
    target = layout.wheels / name
    for old in layout.wheels.glob("agentsurface-*.whl"):
        if old != target:
            old.unlink()
    if target.is_file() and _holds(target, files):
        say(f"up to date {name} (repacked from the installed package)")
        return target
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        # dist-info last, as wheels have it; sorted, so the same install gives the same bytes
        for member in sorted(files, key=lambda n: (".dist-info/" in n, n)):
            info = zipfile.ZipInfo(member, date_time=EPOCH)
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[member], compress_type=zipfile.ZIP_DEFLATED)
    layout.wheels.mkdir(parents=True, exist_ok=True)
    target.write_bytes(buffer.getvalue())
    say(f"repacked the installed package into {name}")
    return target


def cached_runtime(cache: Path | None, offline: bool, memory_snapshot: bool = False) -> Path:
    """Build (or reuse) the runtime in ``cache`` (default: the per-user cache) and return its web
    directory. Needs npm the first time (Pyodide, PyScript) and pip for the wheels; node always;
    with ``memory_snapshot``, Playwright and chromium too (memory_snapshot.py)."""
    assets = runtime_assets()
    if assets is None:
        raise BuildError(
            f"this {DISTRIBUTION} install does not carry the runtime's sources; pass --runtime DIR"
        )
    web = (cache or default_cache(importlib.metadata.version(DISTRIBUTION))).resolve()
    say(f"runtime cache: {web}")
    _copy_assets(assets, web)
    checkout = source_checkout()  # with --cache in a checkout, our wheel is still built from source
    layout = RuntimeLayout(project=checkout or web, web=web)
    if offline and not npm_is_current(layout):
        raise BuildError(f"Pyodide and PyScript are not in {web} and --offline was given")
    if checkout is None:
        build(layout, offline=offline, own_wheel=repack_installed, memory_snapshot=memory_snapshot)
    else:
        build(layout, offline=offline, memory_snapshot=memory_snapshot)
    return web
