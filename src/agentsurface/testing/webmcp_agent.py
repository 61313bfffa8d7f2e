"""A WebMCP agent client for end-to-end tests of a page: it lists and calls the page's tools
through the browser's own client, waits for tools to come and go, and answers the page's
confirmation dialog with real (trusted) mouse clicks.

It drives a Playwright sync ``Page`` and never touches the page's own code: on Chromium with
``--enable-features=WebMCPTesting`` it uses ``document.modelContext.getTools()/executeTool()``;
with ``@mcp-b/webmcp-polyfill`` 5.x the same ``document.modelContext`` (input as JSON text),
with 2.3.2 ``navigator.modelContextTesting``. Playwright is imported
only when a wait runs out, so this module imports without it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from .._core.errors import AgentSurfaceError
from .._core.records import record
from .chromium_flags import with_features
from .webmcp_results import AgentClientError, Tool, ToolNotFound, ToolResult, parse_tool, result_from_outcome

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["AgentCall", "DialogSelectors", "WebMCPAgent", "with_webmcp"]

Shape = Literal["native", "polyfill"]
WEBMCP_FEATURE = "WebMCPTesting"

# Installed on first use in each document (and again after a navigation): finds the browser's
# client, lists tools, starts calls and records how each settled, and polls listings for waits.
_RUNTIME = """(window.__agentSurfaceAgent ??= (() => {
  const shape = () => typeof document.modelContext?.executeTool === "function" ? "native"
      : typeof navigator.modelContextTesting?.executeTool === "function" ? "polyfill" : null;
  const list = async () => {
    const which = shape();
    if (which === "native") {
      return (await document.modelContext.getTools()).map((t) => ({
        name: t.name, title: t.title ?? null, description: t.description ?? "",
        inputSchema: t.inputSchema ?? null, annotations: t.annotations ?? null, origin: t.origin ?? null}));
    }
    if (which === "polyfill") {
      const own = navigator.modelContext?.tools;  // the annotations it was given live here
      return navigator.modelContextTesting.listTools().map((t) => ({
        name: t.name, title: null, description: t.description ?? "", inputSchema: t.inputSchema ?? null,
        annotations: (own && typeof own.get === "function" ? own.get(t.name)?.annotations : null) ?? null}));
    }
    return null;
  };
  // The browser's tool objects by name, from the last getTools() (one from outside costs a few
  // ms): a tool object stands for its name (executeTool runs whatever is registered under it
  // now), so the map is refilled only when a name is missing, the tools change, or a call fails.
  const tools = new Map();
  let watching = false;
  const toolNamed = async (name, fresh) => {
    const client = document.modelContext;
    if (!watching && typeof client.addEventListener === "function") {
      client.addEventListener("toolchange", () => tools.clear());
      watching = true;
    }
    if (fresh || !tools.has(name)) {
      tools.clear();
      for (const t of await client.getTools()) tools.set(t.name, t);
    }
    return tools.get(name);
  };
  const execute = async (name, input, signal) => {
    if (shape() !== "native") {
      return await navigator.modelContextTesting.executeTool(name, JSON.stringify(input), {signal});
    }
    const tool = await toolNamed(name, false);
    if (!tool) throw new DOMException(`no tool ${name}`, "NotFoundError");
    try {
      try {
        return await document.modelContext.executeTool(tool, input, {signal});
      } catch (error) {  // clients that take the input as JSON text (@mcp-b/webmcp-polyfill 5.x)
        if (!/Failed to parse input arguments/.test(String(error?.message))) throw error;
        return await document.modelContext.executeTool(tool, JSON.stringify(input), {signal});
      }
    } catch (error) {
      // Gone since the map was filled: say so, as a fresh listing would have. Never run again:
      // the error may be the tool's own.
      if (!(await toolNamed(name, true))) throw new DOMException(`no tool ${name}`, "NotFoundError");
      throw error;
    }
  };
  const agent = {shape, list, calls: {}, polls: {},
    start(id, name, input) {
      const controller = new AbortController();
      const call = agent.calls[id] = {settled: false, outcome: null, controller};
      call.done = execute(name, input, controller.signal).then(
        (text) => { call.outcome = {text: text ?? null}; },
        (error) => { call.outcome = {rejected: error?.name ?? "Error", message: String(error?.message ?? error)}; },
      ).finally(() => { call.settled = true; });
    },
    async run(id, name, input) {  // start, wait, and hand back the outcome (forgetting the call)
      agent.start(id, name, input);
      await agent.calls[id].done;
      const call = agent.calls[id];
      delete agent.calls[id];
      return call.outcome;
    },
    poll(key) {  // the latest finished listing for this wait, starting one at a time
      const state = agent.polls[key] ??= {busy: false, names: undefined};
      if (!state.busy) {
        state.busy = true;
        list().then((tools) => { state.names = tools && tools.map((t) => t.name); },
                    () => { state.names = null; })
          .finally(() => { state.busy = false; });
      }
      return state.names;
    },
  };
  return agent;
})())"""


def _js(body: str) -> str:
    """A page function of one argument ``arg`` with the runtime bound to ``agent``."""
    return f"(arg) => {{ const agent = {_RUNTIME}; {body} }}"


# For other clients of the same runtime (the MCP bridge, agentsurface.mcp_server): a page function
# of ``arg`` with ``agent`` bound (``agent.list()``, ``agent.start(id, name, input)``, whose
# ``agent.calls[id].done`` settles with the call, ``agent.calls[id].controller`` to abort it).
agent_runtime_function = _js


_SHAPE = _js("return agent.shape();")
_LIST = _js("return agent.list();")
_START = _js("if (!agent.shape()) return false; agent.start(arg.id, arg.name, arg.input); return true;")
_SETTLED = "(id) => { const call = window.__agentSurfaceAgent?.calls[id]; return !call || call.settled; }"
_TAKE = """(id) => {
  const calls = window.__agentSurfaceAgent?.calls ?? {};
  const call = calls[id];
  delete calls[id];
  return call ? call.outcome : null;
}"""
_CANCEL = "(id) => { window.__agentSurfaceAgent?.calls[id]?.controller.abort(); }"
# Why the page cannot start, or null: the embed script's start-up error (a script that raised, a
# package that did not load), or its own script answered with an HTTP error (a wrong src).
_FAILURE = r"""(() => {
  const error = window.agentSurface?.error;
  if (error) return String(error);
  const runtime = performance.getEntriesByType("resource").find((entry) =>
      /(^|\/)agentsurface\.js$/.test(new URL(entry.name).pathname) && entry.responseStatus >= 400);
  return runtime ? `${runtime.name} answered HTTP ${runtime.responseStatus}` : null;
})()"""
_STARTUP_FAILURE = f"() => {_FAILURE}"
_WAIT = _js(
    f"if ({_FAILURE}) return true; "
    "const names = agent.poll(arg.key); return Array.isArray(names) && names.includes(arg.name) === arg.present;"
)
_FORGET = "(key) => { if (window.__agentSurfaceAgent) delete window.__agentSurfaceAgent.polls[key]; }"

_NO_CLIENT = (
    "the page offers no WebMCP client: neither document.modelContext.executeTool (Chromium with "
    f"--enable-features={WEBMCP_FEATURE}) nor navigator.modelContextTesting (@mcp-b/webmcp-polyfill)"
)


@record
class DialogSelectors:
    """Where the confirmation dialog and its buttons are (Playwright selectors). The defaults
    match agentsurface's drop-in dialog (``agentsurface.page``)."""

    dialog: str = "#agentsurface-confirm-dialog"
    approve: str = "#agentsurface-confirm-approve"
    deny: str = "#agentsurface-confirm-deny"


def with_webmcp(launch_args: Mapping[str, Any], *, executable_path: str | None = None) -> dict[str, Any]:
    """Chromium launch options with WebMCP's testing API on (``document.modelContext``), for
    pytest-playwright's ``browser_type_launch_args`` fixture. ``executable_path`` picks a
    Chromium of your own (e.g. ``shutil.which("chromium")``). Chromium's heap profiler is turned
    off too: it crashes Pyodide pages' renderers at random (see :mod:`.chromium_flags`)."""
    out = dict(launch_args)
    out["args"] = with_features(list(out.get("args") or []), enable=[WEBMCP_FEATURE])
    if executable_path is not None:
        out["executable_path"] = executable_path
    return out


class AgentCall:
    """A call the agent started and has not read yet (see :meth:`WebMCPAgent.start`)."""

    def __init__(self, agent: WebMCPAgent, call_id: str, name: str) -> None:
        self.agent = agent
        self.id = call_id
        self.name = name
        self._result: ToolResult | None = None

    @property
    def settled(self) -> bool:
        """Whether the browser's client has answered (without waiting)."""
        return self._result is not None or bool(self.agent.page.evaluate(_SETTLED, self.id))

    def result(self, *, timeout_ms: float | None = None) -> ToolResult:
        """Wait for the call to settle and return its parsed result. Raises ToolCallRejected when
        the browser's client rejected it, AgentClientError when it did not settle in time."""
        if self._result is not None:
            return self._result
        page = self.agent.page
        limit = self.agent.timeout_ms if timeout_ms is None else timeout_ms
        self.agent._wait(
            _SETTLED, self.id, limit, f"the call to {self.name} did not settle within {limit:.0f} ms"
        )
        outcome = page.evaluate(_TAKE, self.id)
        if outcome is None:
            raise AgentClientError(f"the call to {self.name} was lost: the page navigated or reloaded")
        self._result = result_from_outcome(self.name, outcome)
        return self._result

    def cancel(self) -> None:
        """Abort the call through the signal the client passed to executeTool."""
        self.agent.page.evaluate(_CANCEL, self.id)


class WebMCPAgent:
    """The agent's side of a page: ``WebMCPAgent(page)`` (or pytest's ``webmcp_agent`` fixture).

    ``timeout_ms`` bounds every wait (calls, tools, the dialog) unless a method is given its own;
    ``dialog`` says where the confirmation dialog's buttons are.
    """

    def __init__(
        self, page: Page, *, timeout_ms: float = 30_000, dialog: DialogSelectors | None = None
    ) -> None:
        self.page = page
        self.timeout_ms = timeout_ms
        self.dialog = dialog or DialogSelectors()
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ tools

    @property
    def shape(self) -> Shape | None:
        """Which client the page offers: ``"native"``, ``"polyfill"``, or None."""
        found: Shape | None = self.page.evaluate(_SHAPE, None)
        return found

    def list_tools(self) -> list[Tool]:
        """The tools as the agent's client lists them now."""
        raw = self.page.evaluate(_LIST, None)
        if raw is None:
            raise AgentClientError(_NO_CLIENT)
        return [parse_tool(tool) for tool in raw]

    def tool_names(self) -> list[str]:
        return sorted(tool.name for tool in self.list_tools())

    def tool(self, name: str) -> Tool:
        """One listed tool; ToolNotFound when the page does not offer it (saying why when the
        page failed to start)."""
        tools = self.list_tools()
        for tool in tools:
            if tool.name == name:
                return tool
        listed = sorted(t.name for t in tools)
        failure = self.startup_error()
        why = "" if failure is None else f"; the page failed to start: {failure}"
        raise ToolNotFound(f"the page offers no tool {name!r}; it lists {listed}{why}", name, listed)

    def wait_for_tool(self, name: str, *, timeout_ms: float | None = None) -> Tool:
        """Wait until the client lists ``name`` (tools settle asynchronously) and return it."""
        self._wait_listing(name, present=True, timeout_ms=timeout_ms)
        return self.tool(name)

    def wait_for_tool_gone(self, name: str, *, timeout_ms: float | None = None) -> None:
        """Wait until the client no longer lists ``name``."""
        self._wait_listing(name, present=False, timeout_ms=timeout_ms)

    # ------------------------------------------------------------------ calls

    def call(
        self, name: str, input: Mapping[str, Any] | None = None, *, timeout_ms: float | None = None
    ) -> ToolResult:
        """Call a tool and wait for its result. ToolNotFound when the page does not list it."""
        return self.start(name, input).result(timeout_ms=timeout_ms)

    def start(self, name: str, input: Mapping[str, Any] | None = None) -> AgentCall:
        """Start a call without waiting (e.g. one that will wait for the person's approval);
        read it later with ``.result()``."""
        self.tool(name)  # a clear error now rather than a rejection later
        call_id = f"call-{next(self._ids)}"
        arg = {"id": call_id, "name": name, "input": json.loads(json.dumps(dict(input or {})))}
        if not self.page.evaluate(_START, arg):
            raise AgentClientError(_NO_CLIENT)
        return AgentCall(self, call_id, name)

    # ------------------------------------------------------------------ the person

    def wait_for_dialog(self, *, timeout_ms: float | None = None) -> str:
        """Wait for the confirmation dialog to show and return its text."""
        dialog = self.page.locator(self.dialog.dialog)
        limit = self.timeout_ms if timeout_ms is None else timeout_ms
        try:
            dialog.wait_for(state="visible", timeout=limit)
        except Exception as exc:
            raise AgentClientError(
                f"no confirmation dialog ({self.dialog.dialog}) showed within {limit:.0f} ms"
            ) from exc
        return dialog.inner_text()

    def approve(self, *, timeout_ms: float | None = None) -> str:
        """Approve what the dialog shows with a real mouse click (a trusted user activation),
        once its button accepts input. Returns the dialog's text as the person saw it."""
        return self._click(self.dialog.approve, timeout_ms)

    def deny(self, *, timeout_ms: float | None = None) -> str:
        """Deny what the dialog shows with a real mouse click. Returns the dialog's text."""
        return self._click(self.dialog.deny, timeout_ms)

    def _click(self, selector: str, timeout_ms: float | None) -> str:
        text = self.wait_for_dialog(timeout_ms=timeout_ms)
        limit = self.timeout_ms if timeout_ms is None else timeout_ms
        try:
            self.page.locator(selector).click(timeout=limit)  # waits until visible and enabled
        except Exception as exc:
            raise AgentClientError(f"could not click {selector} within {limit:.0f} ms: {exc}") from exc
        return text

    # ------------------------------------------------------------------ waiting

    def startup_error(self) -> str | None:
        """Why the page failed to start, or None: the embed script's error
        (``window.agentSurface.error``), or its script answering with an HTTP error."""
        found = self.page.evaluate(_STARTUP_FAILURE)
        return None if found is None else str(found)

    def _wait_listing(self, name: str, *, present: bool, timeout_ms: float | None) -> None:
        key = f"wait-{next(self._ids)}"
        limit = self.timeout_ms if timeout_ms is None else timeout_ms
        try:
            self._wait(_WAIT, {"key": key, "name": name, "present": present}, limit, None)
            failure = self.startup_error()
            if failure is not None:
                raise AgentClientError(f"waiting for tool {name!r}: the page failed to start: {failure}")
        except _Timeout:
            if self.shape is None:
                raise AgentClientError(f"waiting for tool {name!r}: {_NO_CLIENT}") from None
            listed = self.tool_names()
            what = "never appeared" if present else "never went away"
            raise ToolNotFound(
                f"tool {name!r} {what} within {limit:.0f} ms; the page lists {listed}", name, listed
            ) from None
        finally:
            self.page.evaluate(_FORGET, key)

    def _wait(self, predicate: str, arg: Any, timeout_ms: float, message: str | None) -> None:
        """``page.wait_for_function`` (which never awaits a promise: predicates stay sync)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(predicate, arg=arg, polling=50, timeout=timeout_ms)
        except PlaywrightTimeout:
            if message is None:
                raise _Timeout from None
            raise AgentClientError(message) from None


class _Timeout(AgentSurfaceError):
    pass
