"""The lean boot's e2e page (run by web/agentsurface.js): raw JSON Schemas only, so the loader
starts it with agentsurface alone, imported from its zip; pydantic and jsonschema arrive later
(background load, or first import)."""

import json
import sys

import js
from pyodide.ffi import create_proxy

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, Consumer, compile_manifest
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.lowlevel import ActionContract, ComponentContract

DEFERRED = ("pydantic", "pydantic_core", "jsonschema")
at_start = sorted(name for name in DEFERRED if name in sys.modules)

RENAME = {
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 20}},
    "required": ["name"],
    "additionalProperties": False,
}
LABEL = ComponentContract(
    type="lean.label",
    description="A label the agent may rename",
    actions={"rename": ActionContract("Rename the label", input=RENAME)},
)
label = {"name": "start"}


def rename(value, ctx):
    label["name"] = value["name"]
    return dict(label)


registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([LABEL])))
registry.register(LABEL.bind(instance_id="main", actions={"rename": rename}))
adapter = WebMCPAdapter()
await adapter.start(registry=registry, consumer=Consumer("lean-agent", "webmcp"))  # noqa: F704


def loaded_now():
    return ",".join(sorted(name for name in DEFERRED if name in sys.modules))


def import_now(name):
    """A synchronous JS -> Python call: Python cannot wait here."""
    try:
        __import__(name)
        return "imported"
    except ModuleNotFoundError as exc:
        return f"{type(exc).__name__}: {exc}"


def stdlib_bytecode():
    """Whether the stdlib zip Pyodide booted with holds the bytecode of a module every boot
    imports (the loader's compiled stdlib, agentsurface/_runtime_build/stdlib_zip.py)."""
    import zipfile

    mounted = next(path for path in sys.path if path.endswith(".zip") and "python3" in path)
    with zipfile.ZipFile(mounted) as stdlib:
        return "asyncio/events.pyc" in stdlib.namelist()


js.window.leanAtStart = ",".join(at_start)
# Records got the build's compiled code (agentsurface._compat), and dataclasses was left as it
# was: no exec of the library's stays installed for the page's own dataclasses.
js.window.leanDataclassExec = json.dumps(
    {
        "installed": "exec" in vars(__import__("dataclasses")),
        "compiled": len(__import__("agentsurface._compat", fromlist=["_"])._compiled_code()),
    }
)
js.window.leanFile = sys.modules["agentsurface"].__file__
js.window.leanLoadedNow = create_proxy(loaded_now)
js.window.leanImportNow = create_proxy(import_now)
js.window.leanStdlibBytecode = create_proxy(stdlib_bytecode)
