"""`agentsurface bundle` on a fresh copy of the fixture app → a plain static server → Chromium.

The page trusts the bundled contract.json: its reviewed tools appear in the browser's own
`document.modelContext.getTools()`, and a component the contract does not list is refused.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from collections.abc import Callable, Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures import copy_shop, edit

from agentsurface.cli import main
from agentsurface.wire_names import decode_wire_name


class StaticHandler(SimpleHTTPRequestHandler):
    # What any static host sends for these; older mimetypes tables lack .mjs.
    extensions_map = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".whl": "application/zip",
    }

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """A plain static server over ``folder``, as any static host: its base URL while open."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(StaticHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def bundle_url(web_dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    work = tmp_path_factory.mktemp("bundle")
    app = copy_shop(work / "app")
    assert main(["--root", str(app), "snapshot"]) == 0
    out = work / "site"
    assert main(["--root", str(app), "bundle", "--out", str(out), "--runtime", str(web_dist.parent)]) == 0
    with served(out) as url:
        yield url, out


def test_bundle_is_idempotent_and_ships_the_reviewed_contract(
    bundle_url: tuple[str, Path], web_dist: Path, tmp_path: Path
) -> None:
    _, out = bundle_url
    before = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    app = copy_shop(tmp_path / "again")  # another checkout, another path: the same bundle
    assert main(["--root", str(app), "snapshot"]) == 0
    assert main(["--root", str(app), "bundle", "--out", str(out), "--runtime", str(web_dist.parent)]) == 0
    after = {p.relative_to(out): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    assert after == before
    assert json.loads(before[Path("contract.json")])["completeness"]["status"] == "complete"
    lock = json.loads(before[Path("dist/pyodide/pyodide-lock.json")])
    assert lock["packages"]["shop-app"]["file_name"] == "../wheels/shop_app-0.1.0-py3-none-any.whl"


def test_bundle_refuses_a_stale_contract(
    web_dist: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = copy_shop(tmp_path / "app")
    assert main(["--root", str(app), "snapshot"]) == 0
    surface = app / "shop" / "surface.py"
    surface.write_text(surface.read_text().replace('confirmation="required"', 'confirmation="optional"'))
    out = tmp_path / "site"
    assert main(["--root", str(app), "bundle", "--out", str(out), "--runtime", str(web_dist.parent)]) == 2
    assert "contract.json is stale" in capsys.readouterr().err
    assert not (out / "contract.json").exists()


TOOLS = """async () => (await document.modelContext.getTools()).map((t) => t.name).sort()"""


def test_the_bundled_app_exposes_its_reviewed_tools_in_chromium(
    bundle_url: tuple[str, Path], open_page: Callable[..., Any]
) -> None:
    url, _ = bundle_url
    run = open_page("/index.html", variant="webmcp", base=url)
    run.wait_ready()
    run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
    names = run.page.evaluate(TOOLS)
    assert sorted(decode_wire_name(n) for n in names) == [
        "view:shop.cart.addItem",
        "view:shop.cart.contents",
        "view:shop.cart.empty",
    ]
    refused = run.page.evaluate("() => document.body.dataset.refused")
    assert "shop.coupons" in refused and "not in the capability manifest" in refused
    assert run.console_errors == []


def test_a_page_asking_for_the_memory_snapshot_gets_it_bundled(
    bundle_url: tuple[str, Path], web_dist: Path, tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    _, plain = bundle_url
    assert not list((plain / "dist" / "pyodide").glob("agentsurface-memory*"))  # nobody asked
    app = copy_shop(tmp_path / "app")
    page = app / "index.html"
    page.write_text(page.read_text().replace('src="agentsurface.js"', 'src="agentsurface.js" data-memory-snapshot'))
    assert main(["--root", str(app), "snapshot"]) == 0
    out = tmp_path / "site"
    assert main(["--root", str(app), "bundle", "--out", str(out), "--runtime", str(web_dist.parent)]) == 0
    shipped = {p.name for p in (out / "dist" / "pyodide").glob("agentsurface-memory*")}
    assert shipped == {"agentsurface-memory.bin.gz", "agentsurface-memory.json"}
    # The app's own wheel is pure Python: unpacked after the restore, as a data-package would be.
    with served(out) as url:
        run = open_page("/index.html", variant="webmcp", base=url)
        run.wait_ready()
        run.page.wait_for_function("() => document.body.dataset.ready === 'true'")
        assert run.page.evaluate("() => window.agentSurface.memorySnapshot") is True
        assert run.page.evaluate("() => window.agentSurface.inPlace") == ["shop-app"]
        assert sorted(decode_wire_name(n) for n in run.page.evaluate(TOOLS)) == [
            "view:shop.cart.addItem",
            "view:shop.cart.contents",
            "view:shop.cart.empty",
        ]
        assert [text for kind, text in run.console if kind == "warning"] == []
        assert run.console_errors == []
        run.context.close()  # before the server goes


def test_a_page_asking_for_data_compiled_gets_its_modules_compiled(
    web_dist: Path, tmp_path: Path, open_page: Callable[..., Any]
) -> None:
    app = copy_shop(tmp_path / "app")
    (app / "greeting").mkdir()
    (app / "greeting" / "__init__.py").write_text('GREETING = "hello"\n')
    edit(app / "pyproject.toml", 'files = ["index.html"]', 'files = ["index.html", "greeting/__init__.py"]')
    page = app / "index.html"
    edit(page, 'src="agentsurface.js"', 'src="agentsurface.js" data-compiled data-files="greeting/__init__.py"')
    edit(page, "await start()", "await start()\nimport js\nfrom greeting import GREETING\njs.window.greeting = GREETING")
    assert main(["--root", str(app), "snapshot"]) == 0
    out = tmp_path / "site"
    assert main(["--root", str(app), "bundle", "--out", str(out), "--runtime", str(web_dist.parent)]) == 0
    assert (out / "greeting" / "__pycache__" / "__init__.cpython-314.pyc").is_file()
    with served(out) as url:
        run = open_page("/index.html", variant="webmcp", base=url)
        run.wait_ready()
        run.page.wait_for_function("() => window.greeting === 'hello'")
        cached = "import greeting, os; os.path.exists(greeting.__cached__)"
        assert run.page.evaluate(f"() => window.agentSurface.pyodide.runPython({json.dumps(cached)})") is True
        assert run.console_errors == []
        run.context.close()  # before the server goes
