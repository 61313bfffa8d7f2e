# A page whose script raises at start, after installing the surface inspector: the embed script
# must expose the error (window.agentSurface.error, a rejected ready), the inspector must show it,
# and a test client must fail at once with its text.
import js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    CapabilityAuthority,
    compile_manifest,
    observation,
)
from agentsurface.page import SurfaceInspector


class Notes(AgentComponent, type="notes.list", description="The notes"):
    @observation("The notes")
    def notes(self) -> list[str]:
        return []


registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([Notes])))
SurfaceInspector(registry, js.document.getElementById("inspector"))
registry.register(Notes(titel="typo"))  # TypeError at start: Notes() takes no arguments
