"""Smoke test page code: runs in the page under Pyodide (loaded by web/agentsurface.js).

Imports agentsurface, pydantic and jsonschema (validating one value each), then registers one
tool on whichever WebMCP surface the browser has: document.modelContext (Chromium's shape B),
navigator.modelContext (shape A, e.g. the polyfill), or none. Results go to window.smokeResult
(a JSON string); window.smokeAbort() withdraws the tool.
"""

import json
import sys
import time

import js
from pyodide.ffi import create_proxy, to_js


def timed_import(name):
    start = time.perf_counter()
    module = __import__(name)
    return module, round((time.perf_counter() - start) * 1000)


pydantic, pydantic_ms = timed_import("pydantic")
agentsurface, agentsurface_ms = timed_import("agentsurface")  # after pydantic: measured apart
jsonschema, jsonschema_ms = timed_import("jsonschema")


class Order(pydantic.BaseModel):
    item: str
    qty: int = 1


order = Order.model_validate({"item": "lamp", "qty": "3"})
schema = {"type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]}
jsonschema.validate({"qty": 3}, schema)
try:
    jsonschema.validate({"qty": "three"}, schema)
    jsonschema_rejects = False
except jsonschema.ValidationError:
    jsonschema_rejects = True


def to_js_object(value):
    return to_js(value, dict_converter=js.Object.fromEntries)


def find_model_context():
    for owner, where in ((js.document, "document"), (js.navigator, "navigator")):
        context = getattr(owner, "modelContext", None)
        if context is not None:
            return context, where
    return None, "none"


async def add(tool_input, _extra=None):
    args = tool_input.to_py()
    return to_js_object({"sum": args["a"] + args["b"], "computedBy": f"python {sys.version.split()[0]}"})


model_context, shape = find_model_context()
controller = js.AbortController.new()
execute = create_proxy(add)

if model_context is not None:
    tool = to_js_object(
        {
            "name": "smoke.add",
            "title": "Add two numbers",
            "description": "Adds a and b in Python.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
            "annotations": {"readOnlyHint": True},
            "execute": execute,
        }
    )
    registered = model_context.registerTool(tool, to_js_object({"signal": controller.signal}))
    if hasattr(registered, "then"):  # a Promise on Chromium; undefined from the polyfill
        await registered  # noqa: F704 (top-level await: the loader runs this with runPythonAsync)


def abort():
    controller.abort()
    execute.destroy()


js.window.smokeAbort = create_proxy(abort)
js.window.smokeResult = json.dumps(
    {
        "shape": shape,
        "python": sys.version.split()[0],
        "agentSurface": agentsurface.__name__,
        "pydantic": pydantic.VERSION,
        "jsonschemaRejects": jsonschema_rejects,
        "order": order.model_dump(),
        "rpdsModule": sys.modules["rpds"].__name__ + " <- " + sys.modules["rpds"].HashTrieMap.__module__,
        "importMs": {"pydantic": pydantic_ms, "agentsurface": agentsurface_ms, "jsonschema": jsonschema_ms},
    }
)
