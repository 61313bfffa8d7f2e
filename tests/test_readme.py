"""The README's examples run as written (CPython part): every block marked ``readme: runs`` is
executed, and the "Your first app" project is well formed (its files parse, its page loads the
runtime from where ``bundle`` puts it). e2e/test_readme_first_app.py installs, bundles and tests
that project end to end from the built wheel; tests/test_public_api.py checks every Python block
parses and imports only public names."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib

import pytest

from agentsurface.cli.page_check import wrong_references
from tests.readme import README, first_app_commands, first_app_files, marked_blocks

RUNS = marked_blocks("readme")


def test_the_runnable_blocks_are_marked() -> None:
    assert len(RUNS) >= 3 and all(name == "runs" and lang == "python" for name, lang, _ in RUNS)


@pytest.mark.parametrize("code", [code for _, _, code in RUNS], ids=[f"block-{i}" for i in range(len(RUNS))])
def test_a_runnable_block_runs_as_written(code: str, tmp_path: object) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=str(tmp_path)
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_type_hint_block_prints_the_python_message() -> None:
    (code,) = [code for _, _, code in RUNS if "dict[str, str]" in code]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "Notes.tag(): parameter 'tags': dict[str, str] is not supported" in result.stdout


def test_the_first_app_is_a_complete_project() -> None:
    files = first_app_files()
    assert set(files) == {
        "pyproject.toml",
        "board/__init__.py",
        "board/surface.py",
        "app.py",
        "index.html",
        "tests/conftest.py",
        "tests/test_board.py",
    }
    project = tomllib.loads(files["pyproject.toml"])
    assert project["tool"]["agentsurface"]["files"] == ["index.html", "app.py"]
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    for name, code in files.items():
        if name.endswith(".py"):
            compile(code, name, "exec", flags=flags)
    assert wrong_references("index.html", files["index.html"]) == []
    assert 'data-packages="board-app"' in files["index.html"]
    commands = first_app_commands()
    assert "agentsurface bundle --out site/" in commands and "pytest" in commands
    # The tree listed at the top of the section is the files it shows.
    text = README.read_text(encoding="utf-8")
    for name in files:
        assert f"  {name} " in text, name
