"""Bytecode for a page's own modules (``agentsurface precompile PAGE``): the Python files the
loader's ``data-files`` list, compiled by the runtime's Pyodide into ``__pycache__/`` beside them,
where a page whose loader tag says ``data-compiled`` fetches them with the sources.

A page otherwise compiles its modules on every visit, in a wasm interpreter the browser has not
optimized yet (the devices console's ten modules: 80-100 ms of a cold start). The pycs are
*checked* hash-based (PEP 552): the import uses one only while the source it fetched is the one
the pyc was compiled from, so a source edited after this step runs as written (compiled in the
page, as without it), never a stale pyc.
"""

from __future__ import annotations

import posixpath
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from .precompile import PrecompileError, compile_checked, pyc_name


class _LoaderTag(HTMLParser):
    """The ``src`` and ``data-files`` of the ``<script src=".../agentsurface.js">`` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.src: str | None = None
        self.files: list[str] = []
        self.compiled = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        src = urlsplit((found.get("src") or "").strip()).path
        if tag == "script" and posixpath.basename(src) == "agentsurface.js":  # as cli/page_check matches it
            self.src = self.src or src
            self.files.extend((found.get("data-files") or "").split())
            self.compiled = self.compiled or "data-compiled" in found


def _loader_tag(html: str) -> _LoaderTag:
    parser = _LoaderTag()
    parser.feed(html)
    parser.close()
    return parser


def page_python_files(html: str) -> list[str]:
    """The ``.py`` files a page's loader tag lists in ``data-files``, in its order."""
    return _python_files(_loader_tag(html))


def _python_files(tag: _LoaderTag) -> list[str]:
    return [name for name in dict.fromkeys(tag.files) if name.endswith(".py")]


def asks_compiled(html: str) -> bool:
    """Whether the page's loader tag says ``data-compiled``."""
    return _loader_tag(html).compiled


def page_pyodide(page: Path) -> Path:
    """The Pyodide the page boots: ``dist/pyodide/`` beside the ``agentsurface.js`` it loads."""
    return _pyodide_of(page, _loader_tag(page.read_text(encoding="utf-8")))


def _pyodide_of(page: Path, tag: _LoaderTag) -> Path:
    src = tag.src
    if src is None or "://" in src or src.startswith("/"):
        raise PrecompileError(
            f"{page.name}: no agentsurface.js loaded by a path relative to the page; name the runtime with --runtime"
        )
    pyodide = (page.parent / src).parent / "dist" / "pyodide"
    if not (pyodide / "pyodide-lock.json").exists():
        raise PrecompileError(f"{page.name}: the runtime it loads has no {pyodide} (build it first)")
    return pyodide


def precompile_page(page: Path, pyodide_dir: Path | None = None) -> dict[str, Path]:
    """Compile the page's ``data-files`` Python files (paths relative to the page's folder) with
    the Pyodide in ``pyodide_dir`` (by default the one the page loads); writes each pyc where the
    loader fetches it. Returns source name -> pyc path. Raises PrecompileError for a file that
    cannot be read or does not compile."""
    tag = _loader_tag(page.read_text(encoding="utf-8"))
    pyodide_dir = pyodide_dir or _pyodide_of(page, tag)
    folder = page.parent
    sources: dict[str, str] = {}
    for name in _python_files(tag):
        path = PurePosixPath(name)
        if path.is_absolute() or ".." in path.parts:
            raise PrecompileError(f"{page.name}: data-files entry {name!r} is not inside the page's folder")
        try:
            # The very bytes the page fetches (no newline translation): the pyc is checked
            # against their hash.
            sources[name] = (folder / name).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PrecompileError(f"{page.name}: cannot read {name}: {exc}") from None
    if not sources:
        return {}
    compiled = compile_checked(pyodide_dir, pyodide_dir / "pyodide-lock.json", sources)
    broken = sorted(set(sources) - set(compiled))
    if broken:
        raise PrecompileError(f"{page.name}: {', '.join(broken)} does not compile (a syntax error)")
    written: dict[str, Path] = {}
    for name, data in compiled.items():
        target = folder / pyc_name(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists() or target.read_bytes() != data:
            target.write_bytes(data)
        written[name] = target
    return written
