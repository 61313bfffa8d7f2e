"""The same server serves the repository's static files with the right MIME types, and never its
private files (dot-directories, the database)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from demo.server.backend import DemoServer, start_demo_server

ROOT = Path(__file__).resolve().parents[4]

FILES = {
    "index.html": ("<!doctype html><title>x</title>", "text/html"),
    "web/app.js": ("export {}", "text/javascript"),
    "web/dist/pyodide/pyodide.mjs": ("export {}", "text/javascript"),
    "web/dist/pyodide/pyodide.asm.wasm": ("\0asm", "application/wasm"),
    "web/dist/pyodide/pyodide-lock.json": ("{}", "application/json"),
    "web/dist/wheels/x-1.0-py3-none-any.whl": ("PK", "application/zip"),
    "web/dist/pyodide/python_stdlib.zip": ("PK", "application/zip"),
    "web/style.css": ("body{}", "text/css"),
    "demo/page/model.py": ("x = 1", "text/x-python"),
    "demo/page/pyscript.toml": ("a = 1", "application/toml"),
    "demo/shared/values.py": ("x = 1", "text/x-python"),
    "demo/__init__.py": ("", "text/x-python"),
    # Bytecode of a public source (`agentsurface precompile index.html`).
    "demo/__pycache__/__init__.cpython-314.pyc": ("\0", "application/x-python-code"),
    "demo/page/__pycache__/model.cpython-314.pyc": ("\0", "application/x-python-code"),
}
PRIVATE = [".git/HEAD", ".venv/pyvenv.cfg", "demo/data/devices.sqlite3", "elsewhere/copy.sqlite3", "web/.env",
           # Only the page's public files are served: not the backend's sources (the seed holds the
           # demo tokens), the tests, the project's files or the web runtime's build inputs.
           "demo/server/seed.py", "demo/server/db.py", "tests/server/domain.py", "pyproject.toml", "README.md",
           "scripts/demo.py", "src/agentsurface/__init__.py", "web/package.json",
           "web/node_modules/x/index.js",
           # Bytecode is as private as its source, and none without one.
           "demo/server/__pycache__/seed.cpython-314.pyc", "src/agentsurface/__pycache__/__init__.cpython-314.pyc",
           "demo/page/__pycache__/gone.cpython-314.pyc", "demo/__pycache__/other.cpython-314.pyc"]


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[DemoServer, str]]:
    for name, (text, _) in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for name in PRIVATE:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("secret")
    (tmp_path / "state").mkdir()
    srv, url = start_demo_server(tmp_path, db=tmp_path / "state" / "custom-name.bin")
    yield srv, url
    srv.shutdown()
    srv.server_close()


def fetch(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.headers.get_content_type(), resp.headers.get("Cache-Control", "")
    except urllib.error.HTTPError as err:
        with err:
            return err.code, "", ""


@pytest.mark.parametrize("name", list(FILES))
def test_mime_types(site: tuple[DemoServer, str], name: str) -> None:
    status, content_type, cache = fetch(f"{site[1]}/{name}")
    assert (status, content_type) == (200, FILES[name][1])
    assert cache == "no-cache"  # static files revalidate; only API responses are no-store


@pytest.mark.parametrize("name", [*PRIVATE, "state/custom-name.bin", "demo/data/", "%2egit/HEAD",
                                  "web/../.git/HEAD", "web/dist/../../demo/server/seed.py",
                                  "demo/page/../server/seed.py", "demo/shared/../server/seed.py"])
def test_private_files_are_not_served(site: tuple[DemoServer, str], name: str) -> None:
    assert fetch(f"{site[1]}/{name}")[0] == 404


def test_static_files_are_read_only(site: tuple[DemoServer, str]) -> None:
    req = urllib.request.Request(f"{site[1]}/index.html", data=b"x", method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=10)
    assert info.value.code == 405
    info.value.close()


def test_api_paths_never_fall_through_to_files(site: tuple[DemoServer, str], tmp_path: Path) -> None:
    (tmp_path / "api" / "agent" / "procedures").mkdir(parents=True)
    (tmp_path / "api" / "session").write_text("static")
    (tmp_path / "api" / "agent" / "procedures" / "session.describe").write_text("static")
    for path, status in [("/api/session", 404), ("/api/agent/procedures/session.describe", 405)]:
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"{site[1]}{path}", timeout=10)
        with info.value as answer:
            assert answer.code == status and answer.headers.get_content_type() == "application/json"
            assert json.loads(answer.read())["ok"] is False


@pytest.mark.skipif(not (ROOT / "web" / "agentsurface.js").exists(), reason="web/agentsurface.js not built yet")
def test_repository_script_is_javascript() -> None:
    srv, url = start_demo_server()
    try:
        assert fetch(f"{url}/web/agentsurface.js")[:2] == (200, "text/javascript")
        assert fetch(f"{url}/.git/HEAD")[0] == 404
    finally:
        srv.shutdown()
        srv.server_close()
