"""The startup benchmark's type-hinted page: the README's component (schemas from type hints:
simple ones, written and checked without pydantic in the page), exposed over WebMCP."""

import js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    Consumer,
    action,
    compile_manifest,
    observation,
)
from agentsurface.adapters.webmcp import WebMCPAdapter


class DevicesTable(AgentComponent, type="devices.table", description="The devices table"):
    def __init__(self, rows: list[str]) -> None:
        self.rows, self.selected = rows, []

    @observation("Ids of the rows currently shown")
    def visible_rows(self) -> list[str]:
        return self.rows

    @action("Select rows by id")
    def select_rows(self, ids: list[str]) -> None:
        self.selected = ids


registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([DevicesTable])))
registry.register(DevicesTable(["dev-1", "dev-2"]))
adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("bench-agent", "webmcp"))  # noqa: F704
js.window.firstToolMs = js.performance.now()
