"""``bundle`` checks the pages it copies: a page must load the runtime from where the bundle puts
it (``agentsurface.js`` beside ``dist/`` at the bundle's root), or it would 404 once served.

    <script type="module" src="agentsurface.js" data-packages="my-app"></script>

A reference to the embed script (any path ending in ``agentsurface.js``) or to a runtime file
(``.../dist/pyodide/...``, ``dist/pyscript/...``, ``dist/wheels/...``) is resolved against the
page's place in the bundle; when it lands anywhere else, the problem names the page, what it
wrote and the ``src`` to write instead (relative to the page). URLs with a scheme are left alone.
"""

from __future__ import annotations

import posixpath
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

from .._core.records import record

EMBED_SCRIPT = "agentsurface.js"
_RUNTIME_FILE = re.compile(r"(?:^|/)(dist/(?:pyodide|pyscript|wheels)/.+)$")


@record
class WrongReference:
    page: str  # the page's path inside the bundle
    tag: str
    attribute: str
    written: str
    expected: str  # what to write instead, relative to the page

    def __str__(self) -> str:
        return (
            f"{self.page} loads {self.written!r} (<{self.tag} {self.attribute}>), which the bundle "
            f"does not produce: write {self.attribute}=\"{self.expected}\""
        )


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str, str]] = []
        self.packages: list[list[str]] = []  # data-packages of each script loading the runtime

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.found.append((tag, name, value.strip()))
                if tag == "script" and posixpath.basename(urlsplit(value.strip()).path) == EMBED_SCRIPT:
                    listed = dict(attrs).get("data-packages") or ""
                    self.packages.append(re.split(r"[\s,]+", listed.strip()) if listed.strip() else [])


def _target(path: str) -> str | None:
    """Where in the bundle a reference to the runtime must land, or None if it is not one."""
    if posixpath.basename(path) == EMBED_SCRIPT:
        return EMBED_SCRIPT
    match = _RUNTIME_FILE.search(path)
    return match.group(1) if match else None


def wrong_references(page: str, html: str) -> list[WrongReference]:
    """The runtime references of ``html`` (at ``page`` inside the bundle) that miss the bundle's
    runtime, each with the reference to write instead."""
    parser = _References()
    parser.feed(html)
    here = posixpath.dirname(page)
    problems = []
    for tag, attribute, value in parser.found:
        parts = urlsplit(value)
        if parts.scheme or parts.netloc or not parts.path:
            continue
        target = _target(parts.path)
        if target is None:
            continue
        if parts.path.startswith("/"):
            landed = posixpath.normpath(parts.path.lstrip("/"))
        else:
            landed = posixpath.normpath(posixpath.join(here, parts.path))
        if landed != target:
            expected = posixpath.relpath(target, here or ".")
            problems.append(WrongReference(page, tag, attribute, value, expected))
    return problems


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def missing_app_package(page: str, html: str, app: str) -> str | None:
    """A warning when ``html`` loads the runtime without ``data-packages`` naming the app: its
    scripts could not import the app's packages (nor find its bundled contract)."""
    parser = _References()
    parser.feed(html)
    if not parser.packages or any(_canonical(app) in map(_canonical, p) for p in parser.packages):
        return None
    return (
        f"warning: {page} loads {EMBED_SCRIPT} without data-packages=\"{app}\": its scripts "
        f"cannot import the app's packages nor authority_from_bundle() its contract"
    )
