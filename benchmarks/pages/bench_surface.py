"""The benchmark page's surface: the shared workload's widget (readState, poke), exposed over
WebMCP, plus hooks the benchmark drives (churn, memory checkpoints)."""

import gc
import json

import js
from pyodide.ffi import create_proxy, to_js

from agentsurface import AgentSurfaceRegistry, CapabilityAuthority, Consumer, Invocation, compile_manifest
from agentsurface.adapters.webmcp import WebMCPAdapter
from agentsurface.browser import live_proxy_count
from agentsurface.lowlevel import ActionContract, ComponentContract, ObservationContract

POKE = {
    "type": "object",
    "properties": {"ids": {"type": "array", "items": {"type": "string"}}},
    "required": ["ids"],
    "additionalProperties": False,
}
WIDGET = ComponentContract(
    type="bench.widget",
    description="bench widget",
    observations={
        "readState": ObservationContract(
            "read", output={"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}
        )
    },
    actions={"poke": ActionContract("poke", input=POKE)},
)
registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(compile_manifest([WIDGET])))


def widget(i):
    return WIDGET.bind(
        instance_id=f"w{i}",
        observations={"readState": lambda ctx, i=i: {"n": i}},
        actions={"poke": lambda value, ctx: None},
    )


registry.register(widget(0))
adapter = WebMCPAdapter()
CONSUMER = Consumer("bench-agent", "webmcp")
await adapter.start(registry=registry, consumer=CONSUMER)  # noqa: F704
js.window.firstToolMs = js.performance.now()


async def churn(changes):
    """``changes`` surface changes (a mount or an unmount each), each reflected in the browser."""
    for i in range(1, changes // 2 + 1):
        handle = registry.register(widget(i))
        await adapter.settled()
        handle.close()
        await adapter.settled()
    return json.dumps({"liveProxies": live_proxy_count(), "tools": len(adapter.tool_names)})


def python_heap(start=False):
    """Bytes tracemalloc sees as live after a full collection (it starts tracing on first call)."""
    import tracemalloc  # here, not at the top: its import (pickle) is ~60 ms of the page's startup

    if start and not tracemalloc.is_tracing():
        tracemalloc.start()
    gc.collect()
    current, _peak = tracemalloc.get_traced_memory()
    return current


# The floor per call: a Python function registered directly with the page's modelContext
# through one proxy each, no library (the "bare Pyodide tool" rows of bench_browser.py).
NULL_RESULT = json.dumps(None)


def _result(text):
    return to_js({"content": [{"type": "text", "text": text}]}, dict_converter=js.Object.fromEntries)


def py_noop(tool_input, client=None):
    return _result(NULL_RESULT)


def py_read(tool_input, client=None):
    return _result(json.dumps({"n": 0}))


_model_context = getattr(js.document, "modelContext", None) or js.navigator.modelContext
for _name, _fn, _schema in (
    ("py_noop", py_noop, POKE),
    ("py_read", py_read, {"type": "object", "properties": {}}),
):
    _model_context.registerTool(
        to_js(
            {
                "name": _name,
                "description": "A bare Pyodide tool.",
                "inputSchema": _schema,
                "execute": create_proxy(_fn),
            },
            dict_converter=js.Object.fromEntries,
        )
    )


async def time_invoke(capability, tool_input, calls):
    """Mean ms of ``registry.invoke`` in the page, without the browser layer (after a warm-up)."""
    invocation = Invocation(capability, json.loads(tool_input))
    for _ in range(50):
        await registry.invoke(invocation, consumer=CONSUMER)
    start = js.performance.now()
    for _ in range(calls):
        await registry.invoke(invocation, consumer=CONSUMER)
    return (js.performance.now() - start) / calls


js.window.timeInvoke = create_proxy(time_invoke)
js.window.churn = create_proxy(churn)
js.window.pythonHeap = create_proxy(python_heap)
js.window.proxyCount = create_proxy(live_proxy_count)
js.window.benchReady = True
