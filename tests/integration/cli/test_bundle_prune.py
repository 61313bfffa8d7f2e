"""What ``agentsurface bundle`` leaves out of a site: what its pages never load."""

from __future__ import annotations

from pathlib import Path

from agentsurface.cli.bundle_prune import closure, page_needs, runtime_filter

LOCK = {
    "agentsurface": {"file_name": "../wheels/agentsurface-1.whl", "depends": ["pydantic"]},
    "pydantic": {"file_name": "../wheels/pydantic-2.whl", "depends": ["typing-extensions"]},
    "typing_extensions": {"file_name": "../wheels/typing_extensions-4.whl", "depends": []},
    "micropip": {"file_name": "../wheels/micropip-0.whl", "depends": []},
    "numpy": {"file_name": "numpy-2.whl", "depends": []},
}
PAGE = b'<script type="module" src="agentsurface.js" data-packages="shop-app numpy"></script>'
PLAIN = b'<script type="module" src="agentsurface.js"></script>'
PYSCRIPT = b'<script type="module" src="dist/pyscript/core.js"></script><script type="py"></script>'


def _kept(
    part: str, files: dict[str, bytes], names: list[str], stdlib: str | None = "python_stdlib_compiled.zip"
) -> list[str] | None:
    keep = runtime_filter(part, page_needs(files), LOCK, "shop_app", "agentsurface-1.zip", stdlib)
    return None if keep is None else [name for name in names if keep(Path(name))]


def test_the_closure_follows_the_locks_dependencies() -> None:
    assert closure(LOCK, ["AgentSurface"]) == {"agentsurface", "pydantic", "typing-extensions"}
    assert closure(LOCK, ["Typing_Extensions"]) == {"typing-extensions"}


def test_a_page_without_pyscript_ships_neither_pyscript_nor_micropip() -> None:
    files = {"index.html": PAGE, "app.py": b"print('hi')"}
    needs = page_needs(files)
    assert (needs.pyscript, needs.packages, needs.agentsurface_alone) == (
        False,
        frozenset({"shop-app", "numpy"}),
        False,
    )
    assert _kept("pyscript", files, ["core.js"]) is None
    wheels = [
        "agentsurface-1.whl",
        "agentsurface-1.zip",
        "pydantic-2.whl",
        "typing_extensions-4.whl",
        "micropip-0.whl",
        "numpy-2.whl",
    ]
    assert _kept("wheels", files, wheels) == [
        "agentsurface-1.whl",
        "agentsurface-1.zip",  # the loader may import it in place: it decides at boot
        "pydantic-2.whl",
        "typing_extensions-4.whl",
        "numpy-2.whl",
    ]
    pyodide = [
        "pyodide.mjs",
        "pyodide.js",
        "pyodide.mjs.map",
        "pyodide.asm.wasm",
        "pyodide-lock.json",
        "agentsurface-zip.json",
        "python_stdlib.zip",
        "python_stdlib_compiled.zip",
    ]
    # the loader boots with the compiled stdlib: npm's is never loaded
    assert _kept("pyodide", files, pyodide) == [
        "pyodide.mjs",
        "pyodide.asm.wasm",
        "agentsurface-zip.json",
        "python_stdlib_compiled.zip",
    ]
    # a runtime built without it: the loader boots with npm's
    assert "python_stdlib.zip" in (_kept("pyodide", files, pyodide, stdlib=None) or [])


def test_pyscript_keeps_pyscript_and_micropip_and_a_lone_page_keeps_the_zip() -> None:
    files = {"index.html": PYSCRIPT, "lone.html": PLAIN}
    assert _kept("pyscript", files, ["core.js"]) == ["core.js"]
    # PyScript boots Pyodide with npm's stdlib
    assert _kept("pyodide", files, ["python_stdlib.zip", "python_stdlib_compiled.zip"]) == [
        "python_stdlib.zip",
        "python_stdlib_compiled.zip",
    ]
    wheels = ["agentsurface-1.zip", "micropip-0.whl", "numpy-2.whl"]
    assert _kept("wheels", files, wheels) == ["agentsurface-1.zip", "micropip-0.whl"]


SNAPSHOT_FILES = ["agentsurface-memory.bin.gz", "agentsurface-memory.json", "pyodide.mjs"]


def test_the_memory_snapshot_ships_only_with_a_page_that_asks_for_it() -> None:
    assert _kept("pyodide", {"index.html": PAGE, "lone.html": PLAIN}, SNAPSHOT_FILES) == ["pyodide.mjs"]
    asking = [
        b'<script type="module" src="agentsurface.js" data-memory-snapshot></script>',
        b'<script data-memory-snapshot type="module" src="/static/agentsurface.js"></script>',  # any order
        b'<SCRIPT type="module" src="agentsurface.js" data-memory-snapshot="">',
        b'<script type="module" src="agentsurface.js" data-packages="numpy"\n  data-memory-snapshot\n></script>',
    ]
    for page in asking:
        files = {"index.html": PLAIN, "fast.html": page}
        assert page_needs(files).memory_snapshot is True, page
        assert _kept("pyodide", files, SNAPSHOT_FILES) == SNAPSHOT_FILES
    not_asking = [
        b'<script type="module" src="agentsurface.js" data-memory-snapshots></script>',  # another attribute
        b'<script type="module" src="other.js" data-memory-snapshot></script><script src="agentsurface.js"></script>',
        b"<p>data-memory-snapshot</p>" + PLAIN,  # text of the page, not the loader's attribute
    ]
    for page in not_asking:
        assert page_needs({"index.html": page}).memory_snapshot is False, page
