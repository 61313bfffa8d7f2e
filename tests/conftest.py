"""Shared pytest configuration: a deterministic, modest hypothesis profile, and speed markers
set by folder.

The test command (scripts/test.sh) runs the suites by speed: ``-m unit``, ``-m integration``,
then ``-m e2e`` (e2e/ marks its own). Under tests/, the folder a test file sits in is its speed
class, and nothing else is:

- ``tests/unit/``: CPython, in-process (no servers, no PostgreSQL, no wheels or venvs built);
- ``tests/integration/``: real servers and sockets, PostgreSQL, subprocesses, wheels and venvs.

Both trees mirror the package (``src/agentsurface/``; ``_core`` is ``core``): ``unit/core/pipeline/``
tests ``agentsurface._core.pipeline``, ``integration/server/`` the server on real sockets. What
spans the repository (docs, the public API, releases, layering, the commit hook) is in
``project/``; property-based tests are in ``unit/property/``; the demo and the example apps are in
``integration/demo/`` and ``integration/examples/``. Helpers shared by both trees of one area are
in ``tests/_shared/<area>/``; ``tests/support.py``, ``tests/doc_blocks.py`` and ``tests/fixtures/``
serve everything (e2e/ included). A test file anywhere else under tests/ fails the collection, and
so does a speed marker written on a test (``pytestmark``, a decorator): move the file instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Deterministic (same examples every run) and small enough that the whole suite stays fast.
settings.register_profile(
    "agentsurface",
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("agentsurface")

HERE = Path(__file__).resolve().parent
SPEED_FOLDERS = ("unit", "integration")  # each the name of the marker its tests get
SPEED_MARKERS = (*SPEED_FOLDERS, "e2e")


def speed_of(path: Path) -> str | None:
    """The speed class of a file under tests/ (its first folder), or None outside both trees."""
    parts = path.resolve().relative_to(HERE).parts
    return parts[0] if len(parts) > 1 and parts[0] in SPEED_FOLDERS else None


class MisplacedTestFile(pytest.File):
    """A test file outside tests/unit/ and tests/integration/: its collection fails, saying why."""

    def collect(self) -> list[pytest.Item]:
        rel = self.path.relative_to(HERE.parent).as_posix()
        raise self.CollectError(
            f"{rel} is outside tests/unit/ and tests/integration/: the folder a test file sits in "
            "is its speed class (tests/conftest.py). Move it to tests/unit/ (in-process) or "
            "tests/integration/ (servers, PostgreSQL, subprocesses, wheels), where the package's "
            "layout is mirrored."
        )


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> pytest.File | None:
    if HERE in module_path.resolve().parents and speed_of(module_path) is None:
        return MisplacedTestFile.from_parent(parent, path=module_path)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    written = []
    for item in items:
        path = Path(str(item.path)).resolve()
        if HERE not in path.parents:
            continue  # e2e/ marks its own
        own = sorted({m.name for m in item.iter_markers() if m.name in SPEED_MARKERS})
        if own:
            written.append(f"{item.nodeid}: @pytest.mark.{', '.join(own)}")
        speed = speed_of(path)
        if speed is None:  # not from a test module (those are refused above): refused all the same
            written.append(f"{item.nodeid}: outside tests/unit/ and tests/integration/")
            continue
        item.add_marker(getattr(pytest.mark, speed))
    if written:
        raise pytest.UsageError(
            "speed markers under tests/ come from the folder only (tests/conftest.py); remove these "
            "and put each test in tests/unit/ or tests/integration/:\n  " + "\n  ".join(written)
        )
