"""The memory snapshot's build step (agentsurface/_runtime_build/memory_snapshot.py): written with
an info file tying it to the zip and stdlib it was made from, rebuilt when any input changes and
only then, refused when it comes back damaged, and a typed error without Playwright or chromium.
The snapshot itself is made in headless Chromium by scripts/build_web.py (the test command
builds it), and e2e/test_memory_snapshot.py boots pages from it."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from agentsurface._runtime_build import memory_snapshot
from agentsurface._runtime_build.memory_snapshot import (
    MEMORY_INFO,
    MEMORY_SNAPSHOT,
    RUNTIME_FILES,
    MemorySnapshotError,
    inputs_tag,
    write_memory_snapshot,
)
from agentsurface._runtime_build.page_zip import ZIP_INFO

MEMORY = b"\x00asm linear memory " * 1000


def _dist(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    (dist / "pyodide").mkdir(parents=True)
    (dist / "wheels").mkdir()
    for name in (*RUNTIME_FILES, "pyodide-lock.json"):
        (dist / "pyodide" / name).write_bytes(name.encode())
    (dist / "pyodide" / "stdlib.zip").write_bytes(b"stdlib")
    (dist / "wheels" / "agentsurface-1.0.zip").write_bytes(b"zip")
    info = {"file": "../wheels/agentsurface-1.0.zip", "sha256": "ab" * 32, "stdlib": "stdlib.zip"}
    (dist / "pyodide" / ZIP_INFO).write_text(json.dumps(info))
    return dist


class Maker:
    def __init__(self, memory: bytes = MEMORY, size: int | None = None) -> None:
        self.calls: list[Path] = []
        self.memory, self.size = memory, size

    def __call__(self, dist: Path) -> tuple[bytes, int, list[str]]:
        self.calls.append(dist)
        return gzip.compress(self.memory), len(self.memory) if self.size is None else self.size, []


def test_it_is_written_with_what_it_was_made_from_and_then_kept(tmp_path: Path) -> None:
    dist, maker, said = _dist(tmp_path), Maker(), []
    assert write_memory_snapshot(dist, said.append, make=maker) is True
    snapshot = (dist / "pyodide" / MEMORY_SNAPSHOT).read_bytes()
    assert gzip.decompress(snapshot) == MEMORY
    assert json.loads((dist / "pyodide" / MEMORY_INFO).read_text()) == {
        "file": MEMORY_SNAPSHOT,
        "sha256": hashlib.sha256(snapshot).hexdigest(),
        "size": len(MEMORY),
        "zip_sha256": "ab" * 32,
        "stdlib": "stdlib.zip",
        "packages": ["annotated-types", "typing-extensions"],
        "inputs": inputs_tag(dist / "pyodide"),
    }
    assert said[-1].startswith(f"wrote {MEMORY_SNAPSHOT}: ")
    assert write_memory_snapshot(dist, said.append, make=maker) is False  # up to date
    assert len(maker.calls) == 1 and said[-1] == f"{MEMORY_SNAPSHOT} up to date"


@pytest.mark.parametrize(
    "change",
    ["pyodide/pyodide.asm.wasm", "pyodide/pyodide.asm.mjs", "pyodide/pyodide.mjs", "pyodide/stdlib.zip",
     "pyodide/pyodide-lock.json", "wheels/agentsurface-1.0.zip"],
)
def test_any_input_changing_makes_it_again(tmp_path: Path, change: str) -> None:
    dist, maker = _dist(tmp_path), Maker()
    write_memory_snapshot(dist, lambda _: None, make=maker)
    (dist / change).write_bytes(b"another build")
    assert write_memory_snapshot(dist, lambda _: None, make=maker) is True
    assert len(maker.calls) == 2


def test_a_snapshot_file_changed_on_disk_is_made_again(tmp_path: Path) -> None:
    dist, maker = _dist(tmp_path), Maker()
    write_memory_snapshot(dist, lambda _: None, make=maker)
    (dist / "pyodide" / MEMORY_SNAPSHOT).write_bytes(gzip.compress(b"other memory"))
    assert write_memory_snapshot(dist, lambda _: None, make=maker) is True
    (dist / "pyodide" / MEMORY_INFO).write_text("{not json")
    assert write_memory_snapshot(dist, lambda _: None, make=maker) is True
    assert len(maker.calls) == 3


def test_a_damaged_snapshot_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    dist = _dist(tmp_path)
    with pytest.raises(MemorySnapshotError, match="damaged"):
        write_memory_snapshot(dist, lambda _: None, make=Maker(size=len(MEMORY) + 1))
    assert not (dist / "pyodide" / MEMORY_SNAPSHOT).exists()
    assert not (dist / "pyodide" / MEMORY_INFO).exists()


def test_without_chromium_it_is_a_typed_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_snapshot.shutil, "which", lambda name: None)
    with pytest.raises(MemorySnapshotError, match="chromium"):
        memory_snapshot.make_snapshot(_dist(tmp_path))


def test_a_runtime_without_the_compiled_stdlib_gets_none(tmp_path: Path) -> None:
    dist = _dist(tmp_path)
    info = json.loads((dist / "pyodide" / ZIP_INFO).read_text())
    (dist / "pyodide" / ZIP_INFO).write_text(json.dumps({**info, "stdlib": None}))
    with pytest.raises(MemorySnapshotError, match="no compiled stdlib"):
        write_memory_snapshot(dist, lambda _: None, make=Maker())
