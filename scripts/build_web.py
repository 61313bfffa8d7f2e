#!/usr/bin/env python3
"""Build the offline browser runtime into ``web/dist/``.

Stdlib only. Idempotent: every step skips work that is already done and says so.

    web/dist/pyodide/     Pyodide runtime (from npm ``pyodide``) and *our* pyodide-lock.json
    web/dist/pyscript/    PyScript (npm ``@pyscript/core`` dist/)
    web/dist/polyfill/    the WebMCP polyfill's IIFE bundle (npm ``@mcp-b/webmcp-polyfill``)
    web/dist/wheels/      our wheel, the dependency wheels and the generated ``rpds`` shim wheel

The lock is Pyodide's shipped lock with every package we provide replaced or added, pointing at
``../wheels/<file>`` with its real sha256, so ``pyodide.loadPackage(["agent-surface"])`` and
PyScript ``packages = ["agent-surface"]`` resolve the whole closure by name, integrity-checked,
without any CDN.

Usage: python scripts/build_web.py [--offline]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
NODE_MODULES = WEB / "node_modules"
DIST = WEB / "dist"
WHEELS = DIST / "wheels"
WHEELS_ARG = "web/dist/wheels"  # commands run from the repository root

PYTHON_VERSION = "3.14"
WASM_PLATFORM = "pyemscripten_2026_0_wasm32"

# Pure wheels (any platform). Pinned so the lock is reproducible.
PURE_WHEELS = [
    "pydantic==2.14.3",
    "typing-extensions==4.16.0",
    "annotated-types==0.8.0",
    "typing-inspection==0.4.5",
    "jsonschema==4.26.0",
    "attrs==26.1.0",
    "referencing==0.37.0",
    "jsonschema-specifications==2025.9.1",
    "pyrsistent==0.20.0",  # the py3-none-any wheel; Pyodide's own is a wasm build we can't fetch
    "pyrsistent-as-rpds-py==2.1.0",
    "micropip==0.11.1",  # PyScript installs `packages` through micropip
]
# Binary wheels built for Pyodide's ABI.
WASM_WHEELS = [
    "pydantic-core==2.50.4",
]
# Lock entries have no extras: these extras are folded into the package's `depends`.
EXTRAS = {
    "pyrsistent-as-rpds-py": {"pyrsistent"},
}

# rpds-py has no wasm wheel on PyPI. pyrsistent-as-rpds-py implements the subset jsonschema and
# referencing need (module `pyrsistent_as_rpds.pure`); this generated wheel installs it as the
# `rpds` module under the distribution name `rpds-py`, the same trick as upstream's
# extra/fake_rpds, so dependency metadata and `import rpds` both resolve.
RPDS_SHIM_VERSION = "0.25.1+pyrsistent"
RPDS_SHIM_INIT = '''\
"""rpds stand-in for Pyodide: re-exports pyrsistent-as-rpds-py's pure-Python implementation."""

from pyrsistent_as_rpds.pure import *  # noqa: F403
from pyrsistent_as_rpds.pure import __all__  # noqa: F401
'''

# Marker environment of Pyodide 314 (CPython 3.14 on Emscripten).
MARKER_ENV = {
    "python_version": PYTHON_VERSION,
    "python_full_version": "3.14.2",
    "sys_platform": "emscripten",
    "platform_system": "Emscripten",
    "platform_machine": "wasm32",
    "os_name": "posix",
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_version": "",
    "implementation_version": "3.14.2",
}

PYODIDE_SKIP = {"package.json", "README.md", "pyodide-lock.json"}
PYODIDE_SKIP_SUFFIXES = (".d.ts", ".html")


class BuildError(Exception):
    pass


def say(message: str) -> None:
    print(f"[build_web] {message}", flush=True)


def run(cmd: list[str], cwd: Path = ROOT) -> None:
    say("$ " + " ".join(cmd))
    try:
        result = subprocess.run(cmd, cwd=cwd, text=True, capture_output=True)
    except FileNotFoundError as exc:
        raise BuildError(f"command not found: {cmd[0]}") from exc
    if result.returncode != 0:
        output = (result.stdout + result.stderr).strip()
        raise BuildError(f"command failed ({result.returncode}): {' '.join(cmd)}\n{output}")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --------------------------------------------------------------------------- npm


def npm_pins() -> dict[str, str]:
    return json.loads((WEB / "package.json").read_text())["dependencies"]


def npm_is_current() -> bool:
    for name, version in npm_pins().items():
        manifest = NODE_MODULES / name / "package.json"
        if not manifest.exists() or json.loads(manifest.read_text()).get("version") != version:
            return False
    return True


def ensure_node_modules() -> None:
    if npm_is_current():
        say("node_modules up to date")
        return
    if shutil.which("npm") is None:
        raise BuildError("npm is not installed (needed once to fetch Pyodide, PyScript, polyfill)")
    has_lock = (WEB / "package-lock.json").exists()
    run(["npm", "ci" if has_lock else "install", "--no-audit", "--no-fund"], cwd=WEB)
    if not npm_is_current():
        raise BuildError(f"npm finished but node_modules does not match {npm_pins()}")


# --------------------------------------------------------------------------- copies


def sync_file(src: Path, dst: Path) -> bool:
    """Copy src to dst unless dst already has the same size and mtime."""
    if dst.exists():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and int(s.st_mtime) == int(d.st_mtime):
            return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    return True


def sync_tree(src_dir: Path, dst_dir: Path, keep=lambda p: True) -> None:
    if not src_dir.is_dir():
        raise BuildError(f"missing {src_dir.relative_to(ROOT)} (is node_modules complete?)")
    copied = 0
    for src in sorted(src_dir.rglob("*")):
        if src.is_file() and keep(src):
            copied += sync_file(src, dst_dir / src.relative_to(src_dir))
    rel = dst_dir.relative_to(ROOT)
    say(f"{rel}: copied {copied} file(s)" if copied else f"{rel}: up to date")


def copy_runtime() -> None:
    def pyodide_file(path: Path) -> bool:
        return path.name not in PYODIDE_SKIP and not path.name.endswith(PYODIDE_SKIP_SUFFIXES)

    sync_tree(NODE_MODULES / "pyodide", DIST / "pyodide", pyodide_file)
    for required in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        if not (DIST / "pyodide" / required).exists():
            raise BuildError(f"Pyodide runtime file missing after copy: {required}")

    sync_tree(NODE_MODULES / "@pyscript" / "core" / "dist", DIST / "pyscript")

    # The IIFE build has no imports (the ESM index.js imports @cfworker/json-schema by bare name),
    # auto-installs navigator.modelContext and, by default, navigator.modelContextTesting.
    bundle = NODE_MODULES / "@mcp-b" / "webmcp-polyfill" / "dist" / "index.iife.js"
    if not bundle.exists():
        raise BuildError(f"polyfill bundle not found: {bundle.relative_to(ROOT)}")
    changed = sync_file(bundle, DIST / "polyfill" / "webmcp-polyfill.iife.js")
    say("web/dist/polyfill: " + ("copied webmcp-polyfill.iife.js" if changed else "up to date"))


# --------------------------------------------------------------------------- wheels


def wheel_name_version(path: Path) -> tuple[str, str]:
    name, version = path.name.split("-")[:2]
    return canonical(name), version


def find_wheel(requirement: str) -> Path | None:
    name, version = requirement.split("==")
    for path in WHEELS.glob("*.whl"):
        if wheel_name_version(path) == (canonical(name), version):
            return path
    return None


def pip_download(requirement: str, extra: list[str], offline: bool) -> None:
    if find_wheel(requirement):
        say(f"cached {requirement}")
        return
    if offline:
        raise BuildError(f"{requirement} is not in web/dist/wheels and --offline was given")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--disable-pip-version-check",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            PYTHON_VERSION,
            *extra,
            "-d",
            WHEELS_ARG,
            requirement,
        ]
    )
    if not find_wheel(requirement):
        raise BuildError(f"pip download did not produce a wheel for {requirement}")


def download_wheels(offline: bool) -> None:
    WHEELS.mkdir(parents=True, exist_ok=True)
    for requirement in PURE_WHEELS:
        pip_download(requirement, [], offline)
    wasm = ["--platform", WASM_PLATFORM, "--implementation", "cp", "--abi", "cp314"]
    for requirement in WASM_WHEELS:
        pip_download(requirement, wasm, offline)


def build_own_wheel() -> Path:
    for old in WHEELS.glob("agent_surface-*.whl"):
        old.unlink()
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--disable-pip-version-check",
            ".",
            "--no-deps",
            "-w",
            WHEELS_ARG,
        ]
    )
    built = sorted(WHEELS.glob("agent_surface-*.whl"))
    if len(built) != 1:
        raise BuildError(f"expected one agent_surface wheel, found {[p.name for p in built]}")
    say(f"built {built[0].name}")
    return built[0]


def record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def build_rpds_shim() -> Path:
    dist_info = f"rpds_py-{RPDS_SHIM_VERSION}.dist-info"
    files = {
        "rpds/__init__.py": RPDS_SHIM_INIT,
        "rpds/py.typed": "",
        f"{dist_info}/METADATA": (
            "Metadata-Version: 2.1\n"
            "Name: rpds-py\n"
            f"Version: {RPDS_SHIM_VERSION}\n"
            "Summary: rpds for Pyodide, backed by pyrsistent-as-rpds-py (generated by "
            "agent-surface's build_web.py)\n"
            "Requires-Dist: pyrsistent-as-rpds-py[pyrsistent]\n"
        ),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: agent-surface build_web.py\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        f"{dist_info}/top_level.txt": "rpds\n",
    }
    record = [f"{name},{record_hash(text.encode())},{len(text.encode())}" for name, text in files.items()]
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():  # fixed timestamps: the same bytes on every build
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), text)
    data = buffer.getvalue()

    target = WHEELS / f"rpds_py-{RPDS_SHIM_VERSION}-py3-none-any.whl"
    if target.exists() and target.read_bytes() == data:
        say(f"up to date {target.name}")
    else:
        target.write_bytes(data)
        say(f"wrote {target.name}")
    return target


# --------------------------------------------------------------------------- lock


def evaluate_marker(marker: str, extras: set[str]) -> bool:
    """Evaluate a PEP 508 marker for Pyodide (enough of the grammar for wheel metadata)."""
    tokens = re.findall(
        r"\(|\)|\band\b|\bor\b|\bnot in\b|\bin\b|[=!<>~]=?=?|'[^']*'|\"[^\"]*\"|[\w.]+", marker
    )
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def value(token: str) -> str:
        if token[0] in "'\"":
            return token[1:-1]
        return MARKER_ENV.get(token, "")

    def compare(left: str, op: str, right: str) -> bool:
        if op in ("in", "not in"):
            return (left in right) == (op == "in")
        if re.fullmatch(r"[\d.]+", left) and re.fullmatch(r"[\d.]+", right):
            lv = tuple(int(p) for p in left.split("."))
            rv = tuple(int(p) for p in right.split("."))
            width = max(len(lv), len(rv))
            a, b = lv + (0,) * (width - len(lv)), rv + (0,) * (width - len(rv))
        else:
            a, b = left, right
        if op == "~=":  # compatible release: >= right, same prefix but for the last part
            return a >= b and a[: len(right.split(".")) - 1] == b[: len(right.split(".")) - 1]
        return {
            "==": a == b,
            "!=": a != b,
            "<": a < b,
            "<=": a <= b,
            ">": a > b,
            ">=": a >= b,
            "===": left == right,
        }[op]

    def atom() -> bool:
        if peek() == "(":
            take()
            result = disjunction()
            take()  # ")"
            return result
        left, op, right = take(), take(), take()
        if "extra" in (left, right):
            wanted = right if left == "extra" else left
            return any(canonical(x) == canonical(wanted[1:-1]) for x in extras) == (op == "==")
        return compare(value(left), op, value(right))

    def conjunction() -> bool:
        result = atom()
        while peek() == "and":
            take()
            result = atom() and result
        return result

    def disjunction() -> bool:
        result = conjunction()
        while peek() == "or":
            take()
            result = conjunction() or result
        return result

    return disjunction()


def read_metadata(wheel: Path) -> tuple[dict, list[str]]:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        metadata = Parser().parsestr(archive.read(meta_name).decode())
    return metadata, names


def top_level_imports(names: list[str]) -> list[str]:
    found = set()
    for name in names:
        head, _, rest = name.partition("/")
        if head.endswith((".dist-info", ".data")) or head == "__pycache__":
            continue
        if rest:
            if rest == "__init__.py":
                found.add(head)
        elif head.endswith(".py"):
            found.add(head[:-3])
        elif head.endswith(".so"):
            found.add(head.split(".")[0])
    return sorted(found)


def lock_entry(wheel: Path) -> dict:
    metadata, names = read_metadata(wheel)
    name = metadata["Name"]
    extras = EXTRAS.get(canonical(name), set())
    depends = []
    for requirement in metadata.get_all("Requires-Dist") or []:
        spec, _, marker = requirement.partition(";")
        if marker.strip() and not evaluate_marker(marker.strip(), extras):
            continue
        dep = canonical(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec).group(1))
        if dep not in depends:
            depends.append(dep)
    return {
        "name": name,
        "version": metadata["Version"],
        "file_name": f"../wheels/{wheel.name}",  # resolved against the lock's own URL
        "install_dir": "site",
        "sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "package_type": "package",
        "imports": top_level_imports(names),
        "depends": depends,
        "unvendored_tests": False,
    }


def write_lock(wheels: list[Path]) -> None:
    shipped = json.loads((NODE_MODULES / "pyodide" / "pyodide-lock.json").read_text())
    ours: dict[str, dict] = {}
    for wheel in wheels:
        entry = lock_entry(wheel)
        key = canonical(entry["name"])
        if key in ours:
            raise BuildError(f"two wheels provide {key}: {ours[key]['file_name']} and {wheel.name}")
        ours[key] = entry

    for key, entry in ours.items():
        for dep in entry["depends"]:
            if dep not in ours:
                raise BuildError(f"{key} depends on {dep}, which has no wheel in web/dist/wheels")

    replaced = sorted(k for k in ours if k in shipped["packages"])
    packages = dict(shipped["packages"])
    packages.update(ours)
    lock = {"info": shipped["info"], "packages": dict(sorted(packages.items()))}
    text = json.dumps(lock, indent=1, sort_keys=False) + "\n"

    target = DIST / "pyodide" / "pyodide-lock.json"
    if target.exists() and target.read_text() == text:
        say("pyodide-lock.json up to date")
    else:
        target.write_text(text)
        say(
            f"wrote pyodide-lock.json: {len(ours)} local wheels "
            f"({len(replaced)} replace Pyodide's entries: {', '.join(replaced)})"
        )


def wheels_in_lock() -> list[Path]:
    wanted = [find_wheel(r) for r in PURE_WHEELS + WASM_WHEELS]
    return [w for w in wanted if w is not None]


# --------------------------------------------------------------------------- main


def build(offline: bool = False) -> None:
    ensure_node_modules()
    copy_runtime()
    download_wheels(offline)
    own = build_own_wheel()
    shim = build_rpds_shim()
    write_lock([own, shim, *wheels_in_lock()])
    say("done: web/dist is ready")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--offline", action="store_true", help="fail instead of downloading wheels that are not cached"
    )
    args = parser.parse_args(argv)
    try:
        build(offline=args.offline)
    except BuildError as exc:
        print(f"[build_web] ERROR: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
