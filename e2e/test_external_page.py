"""The page refuses a dependency's capabilities the app has not approved, in Chromium (AS-EXTERNAL-001).

The contract is compiled by the CLI from the widget_shop fixture with the acme_widgets fixture
installed beside it as a distribution (a dist-info whose RECORD lists its files), once without and
once with the app's approval; the page (e2e/pages/external.py) trusts whichever the test serves,
registers the app's basket, the dependency's panel and the app's order desk (which offers the
dependency's procedure), and starts the WebMCP adapter. The agent is the browser's own client.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.fixtures import ACME_WIDGETS, WIDGET_SHOP, edit, install_distribution

from agentsurface.cli import main
from agentsurface.wire_names import decode_wire_name

PAGE = "/e2e/pages/external.html"
TOOLS = """async () => (await document.modelContext.getTools()).map((t) => t.name).sort()"""


def _compile(root: Path, approve: bool, capsys: pytest.CaptureFixture[str]) -> str:
    shutil.copytree(WIDGET_SHOP, root, ignore=shutil.ignore_patterns("__pycache__"))
    source = (ACME_WIDGETS / "acme_widgets" / "__init__.py").read_text()
    install_distribution(root / "site", "Acme_Widgets", "1.0.0", {"acme_widgets/__init__.py": source})
    edit(
        root / "pyproject.toml",
        'modules = ["widgetshop.surface"]',
        'modules = ["widgetshop.surface"]\npython-path = [".", "site"]',
    )
    assert main(["--root", str(root), "snapshot"]) == 1  # written; acme-widgets not approved
    if approve:
        capsys.readouterr()
        assert main(["--root", str(root), "approve"]) == 0
        with (root / "pyproject.toml").open("a") as f:
            f.write("\n" + capsys.readouterr().out)
        assert main(["--root", str(root), "snapshot"]) == 0
        assert main(["--root", str(root), "check"]) == 0
    return (root / ".agentsurface" / "contract.json").read_text()


def _open(open_page: Callable[..., Any], contract: str) -> tuple[dict[str, Any], list[str], Any]:
    def serve(run: Any) -> None:
        run.context.route(
            "**/e2e/pages/external-contract.json",
            lambda route: route.fulfill(status=200, content_type="application/json", body=contract),
        )

    run = open_page(PAGE, variant="webmcp", before_goto=serve)
    run.wait_ready()
    run.page.wait_for_function("() => window.externalResult !== undefined")
    outcome = json.loads(run.page.evaluate("() => window.externalResult"))
    tools = sorted(decode_wire_name(n) for n in run.page.evaluate(TOOLS))
    return outcome, tools, run


def test_the_page_refuses_an_unapproved_dependency_and_the_agent_never_sees_it(
    open_page: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, tools, run = _open(open_page, _compile(tmp_path / "app", False, capsys))
    assert outcome["Basket"] == "registered"
    for refused in ("Panel", "OrderDesk"):
        assert outcome[refused]["distribution"] == "acme-widgets"
        assert outcome[refused]["status"] == "unapproved"
        assert "'acme-widgets' (1.0.0), which the app has not approved" in outcome[refused]["message"]
    assert tools == ["view:shop.basket.items"]
    assert run.console_errors == []


def test_once_approved_the_page_exposes_the_dependencys_tools(
    open_page: Callable[..., Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcome, tools, run = _open(open_page, _compile(tmp_path / "app", True, capsys))
    assert outcome == {"Basket": "registered", "Panel": "registered", "OrderDesk": "registered"}
    assert tools == [
        "domain:acme.widgets.order",
        "view:acme.widgets.panel.addWidget",
        "view:acme.widgets.panel.widgetsShown",
        "view:shop.basket.items",
        "view:shop.desk.pending",
    ]
    order = run.page.evaluate(
        """async () => {
            const tools = await document.modelContext.getTools();
            const tool = tools.find((t) => t.name.includes("order"));
            return await document.modelContext.executeTool(tool, {count: 2});
        }"""
    )
    content = json.loads(order)  # shape B: the JSON text of the tool content
    assert not content.get("isError"), content
    assert json.loads(content["content"][0]["text"]) == {"ordered": 2}  # the dependency's procedure ran
