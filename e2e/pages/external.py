"""A page whose surface registers a dependency's capabilities (runs under Pyodide).

The dependency (tests/fixtures/acme_widgets) and the app's surface that imports it
(tests/fixtures/widget_shop) are written where an installed package would be; the committed
contract comes from ``external-contract.json``, which the test serves (compiled with acme-widgets
approved or not). The page does what an app does: trust the contract, register what is mounted,
start the WebMCP adapter. What registered and what was refused goes to ``window.externalResult``.
"""

import json
import os
import sys

import js
from pyodide.http import pyfetch

from agentsurface import AgentSurfaceRegistry, Consumer
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.compiler.load import ExternalContractError, authority_from_contract

SITE = "/home/pyodide/external-site"
SOURCES = {
    "acme_widgets/__init__.py": "/tests/fixtures/acme_widgets/acme_widgets/__init__.py",
    "widgetshop/__init__.py": "/tests/fixtures/widget_shop/widgetshop/__init__.py",
    "widgetshop/surface.py": "/tests/fixtures/widget_shop/widgetshop/surface.py",
}


async def fetch_text(url):
    response = await pyfetch(url)
    if not response.ok:
        raise RuntimeError(f"{url}: HTTP {response.status}")
    return await response.string()


for relative, url in SOURCES.items():
    target = os.path.join(SITE, relative)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        f.write(await fetch_text(url))  # noqa: F704
sys.path.insert(0, SITE)

from widgetshop.surface import Basket, OrderDesk, Panel  # noqa: E402

registry = AgentSurfaceRegistry(authority=authority_from_contract(await fetch_text("external-contract.json")), procedure_executor=lambda capability, value, context: {"ordered": value["count"]})  # noqa: F704
outcome = {}
for component in (Basket(), Panel(), OrderDesk()):
    name = type(component).__name__
    try:
        registry.register(component)
        outcome[name] = "registered"
    except ExternalContractError as exc:
        outcome[name] = {"distribution": exc.distribution, "status": exc.status, "message": str(exc)}

adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("browser-agent", "webmcp"))  # noqa: F704
js.window.externalResult = json.dumps(outcome)
