"""What a page booted from a memory snapshot starts over (agentsurface.browser.memory_snapshot):
everything drawn from the OS's random source before the snapshot was taken would otherwise be the
same on every visit, for every visitor."""

from __future__ import annotations

import random
import sys

import pytest

from agentsurface._core import ids
from agentsurface.browser.memory_snapshot import restored


@pytest.fixture(autouse=True)
def kept_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))


def test_the_ids_drawn_before_the_snapshot_are_never_handed_out() -> None:
    ids.random_id("inv-")  # the build drew from the pool: the rest of it is in the snapshot
    frozen = ids._pool[ids._taken :]
    assert frozen
    restored()
    assert ids._pool == b""
    after = ids.random_id("inv-", length=len(frozen))
    assert after.removeprefix("inv-").encode() != frozen


def test_the_random_module_is_seeded_again() -> None:
    random.seed(41)
    frozen = random.getstate()  # what every visit would start from
    restored()
    assert random.getstate() != frozen


def test_the_restores_repeated_path_entries_are_dropped_in_order() -> None:
    sys.path[:] = ["", "", "/lib/python314.zip", "/lib/agentsurface.zip", "/lib/python314.zip"]
    restored()
    assert sys.path == ["", "/lib/python314.zip", "/lib/agentsurface.zip"]
