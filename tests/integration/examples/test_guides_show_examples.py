"""A guide that walks through an example app shows its files as they are: each block marked
``<!-- example: APP/PATH -->`` is that file of examples/, byte for byte (the example's own tests,
its `agentsurface check` and its e2e run are what prove the guide runs as written)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.doc_blocks import located_blocks

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
BLOCKS = located_blocks("example")


def test_the_fastapi_guide_shows_the_example_app() -> None:
    shown = {b.name for b in BLOCKS if b.page == "docs/guides/fastapi.md"}
    assert {"fastapi_app/expenses/routes.py", "fastapi_app/expenses/main.py", "fastapi_app/app.py"} <= shown


@pytest.mark.parametrize("block", BLOCKS, ids=[f"{b.page}:{b.name}" for b in BLOCKS])
def test_an_example_block_is_the_file_as_written(block: object) -> None:
    name, code = block.name, block.code  # type: ignore[attr-defined]
    assert (EXAMPLES / name).read_text(encoding="utf-8") == code
