"""The documentation's examples run as written (CPython part): every block marked ``readme: runs``
in README.md or a page under docs/ is executed, and the "Your first app" project of
docs/getting-started.md is well formed (its files parse, its page loads the runtime from where
``bundle`` puts it). e2e/test_readme_first_app.py installs, bundles and tests that project end to
end from the built wheel; tests/unit/project/test_public_api.py checks every Python block parses and imports
only public names; tests/unit/project/test_docs_site.py checks the links and the site's reference pages."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from collections import Counter

import pytest

from agentsurface.cli.page_check import wrong_references
from tests.doc_blocks import (
    ROOT,
    first_app_commands,
    first_app_files,
    first_app_page,
    full_stack_files,
    located_blocks,
)

RUNS = located_blocks("readme")

# Where the runnable blocks are. None may be lost: moving one is a change to this table, and the
# README's test ran four before the docs site (page API, type hints, procedure references, passkeys).
RUNNABLE_BLOCKS_PER_PAGE = {
    "README.md": 1,
    "docs/guides/page-api.md": 1,
    "docs/guides/capabilities.md": 3,
    "docs/guides/passkeys.md": 2,
    "docs/guides/fastapi.md": 1,
    "docs/guides/django.md": 1,
}


def test_the_runnable_blocks_are_marked_and_none_is_lost() -> None:
    assert all(b.name == "runs" and b.language == "python" for b in RUNS)
    assert Counter(b.page for b in RUNS) == RUNNABLE_BLOCKS_PER_PAGE


@pytest.mark.parametrize(
    "code", [b.code for b in RUNS], ids=[f"{b.page}-{i}" for i, b in enumerate(RUNS)]
)
def test_a_runnable_block_runs_as_written(code: str, tmp_path: object) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=str(tmp_path)
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_type_hint_block_prints_the_python_message() -> None:
    (code,) = [b.code for b in RUNS if "dict[str, str]" in b.code]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "Notes.tag(): parameter 'tags': dict[str, str] is not supported" in result.stdout


def test_the_first_app_is_a_complete_project_on_the_getting_started_page() -> None:
    page = first_app_page()
    assert page.relative_to(page.parents[1]).as_posix() == "docs/getting-started.md"
    assert len(located_blocks("first-app")) == 8  # the seven files and the commands
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
    # Installed by name (the e2e test points pip at the wheel it builds), never from a path.
    assert 'pip install "agentsurface[cli,testing]"' in commands and "$" not in commands
    # The tree listed at the top of the section is the files it shows.
    text = page.read_text(encoding="utf-8")
    for name in files:
        assert f"  {name} " in text, name


def test_the_full_stack_example_is_a_complete_project_on_its_page() -> None:
    """Issue 43: one complete full-stack example (page, server, tests); e2e/test_full_stack_example.py
    runs it as written."""
    blocks = located_blocks("full-stack")
    assert {b.page for b in blocks} == {"docs/guides/full-stack.md"}
    files = full_stack_files()
    assert set(files) == {
        "pyproject.toml",
        "expenses/__init__.py",
        "expenses/contracts.py",
        "expenses/surface.py",
        "server.py",
        "app.py",
        "index.html",
        "tests/conftest.py",
        "tests/test_expenses.py",
    }
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    for name, code in files.items():
        if name.endswith(".py"):
            compile(code, name, "exec", flags=flags)
    assert wrong_references("index.html", files["index.html"]) == []
    assert "authority_from_bundle()" in files["app.py"] and "bridge.authority(" in files["app.py"]
    assert "asgi_server" in files["tests/test_expenses.py"]
    text = (ROOT / "docs/guides/full-stack.md").read_text(encoding="utf-8")
    for name in files:
        assert f"  {name} " in text, name
def test_the_django_guide_shows_the_example_projects_own_code() -> None:
    """Each ``django-app: <file>`` block of docs/guides/django.md is that file's text in
    examples/django_app (whose own tests and tests/unit/django run it), verbatim."""
    blocks = located_blocks("django-app")
    assert {b.page for b in blocks} == {"docs/guides/django.md"} and len(blocks) == 7
    for block in blocks:
        source = (ROOT / "examples" / "django_app" / block.name).read_text(encoding="utf-8")
        assert block.language == "python" and block.code in source, block.name
