# A page whose script raises at start, after installing the surface inspector: the embed script
# must expose the error (window.agentSurface.error, a rejected ready), the inspector must show it,
# and a test client must fail at once with its text.
import js

from agentsurface import (
    AgentComponent,
    AgentSurfaceRegistry,
    compile_manifest,
    create_capability_authority,
    observation,
)
from agentsurface.page import install_surface_inspector


class Notes(AgentComponent, type="notes.list", description="The notes"):
    @observation("The notes")
    def notes(self) -> list[str]:
        return []


registry = AgentSurfaceRegistry(authority=create_capability_authority(compile_manifest([Notes])))
install_surface_inspector(registry, js.document.getElementById("inspector"))
registry.register(Notes(titel="typo"))  # TypeError at start: Notes() takes no arguments
