"""The public surface, pinned: what each public module exports, which top-level modules are
public, and that the README and the demo import nothing else. Changing any of it is a
reviewed change to this file."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import agent_surface

ROOT = Path(__file__).resolve().parent.parent

PUBLIC: dict[str, list[str]] = {
    "agent_surface": [
        "ERROR_MATRIX",
        "EVENT_TYPES",
        "ActionBinding",
        "ActionContext",
        "ActionContract",
        "ActionDescriptor",
        "AgentComponent",
        "AgentSurfaceError",
        "AgentSurfaceRegistry",
        "AuditEvent",
        "AuditSink",
        "AuthorityError",
        "Budget",
        "CancelSignal",
        "CapabilityAuthority",
        "CapabilityError",
        "Clock",
        "ComponentBinding",
        "ComponentContract",
        "ComponentDescriptor",
        "Concurrency",
        "Consumer",
        "Decision",
        "DefinitionError",
        "ErrorCode",
        "ErrorSpec",
        "Invalid",
        "Invocation",
        "InvocationResult",
        "Issue",
        "JsonValue",
        "Limits",
        "ManualClock",
        "MemoryAuditSink",
        "ObservationBinding",
        "ObservationContract",
        "ObservationDescriptor",
        "PendingConfirmation",
        "Policy",
        "PolicyContext",
        "PreconditionFailure",
        "ProcedureContract",
        "ProcedureDescriptor",
        "ProcedureExecutor",
        "ProcedureReference",
        "ReadContext",
        "RegistrationHandle",
        "RegistryDisposedError",
        "Retry",
        "Schema",
        "Snapshot",
        "SurfaceEvent",
        "SystemClock",
        "Valid",
        "action",
        "audit",
        "authenticated",
        "compile_manifest",
        "console_audit_sink",
        "create_capability_authority",
        "create_registry",
        "environment",
        "error",
        "has_permission",
        "import_jsonschema",
        "memory_audit_sink",
        "observation",
        "rate_limit",
        "require_confirmation",
        "schema_from_json",
        "schema_from_type",
        "surface_shut_down",
        "tenant_boundary",
    ],
    "agent_surface.testing": [
        "AgentCall",
        "AgentClientError",
        "CapturedRef",
        "DialogSelectors",
        "ImpureObservation",
        "InvocationFailed",
        "TestSurface",
        "Tool",
        "ToolCallRejected",
        "ToolError",
        "ToolNotFound",
        "ToolResult",
        "WebMCPAgent",
        "assert_exposes",
        "assert_exposes_unavailable",
        "assert_fails_with",
        "assert_hidden",
        "assert_ok",
        "create_test_surface",
        "render_semantic_snapshot",
        "semantic_snapshot",
        "with_webmcp",
    ],
    "agent_surface.toolset": [
        "AgentTool",
        "AgentToolset",
        "ConfirmationMode",
        "Mode",
        "Target",
        "ToolState",
        "Topology",
        "capability_state",
        "create_agent_toolset",
        "describe_prefix",
    ],
    "agent_surface.adapters.webmcp": [
        "ConfirmHook",
        "Curation",
        "Descriptor",
        "ModelContext",
        "ModelContextError",
        "Shape",
        "ToolCall",
        "WebMcpAdapter",
        "WebMcpTool",
        "create_webmcp_adapter",
    ],
    "agent_surface.explain": ["CapabilityExplanation", "PolicyVote", "explain_surface"],
    "agent_surface.wire_names": [
        "MAX_WIRE_NAME_LENGTH",
        "WIRE_NAME_RE",
        "WireNameCatalog",
        "WireNameEntry",
        "assign_wire_names",
        "decode_wire_name",
        "encode_capability_id",
        "encode_wire_name",
        "is_wire_name",
    ],
    "agent_surface.bridge": [
        "MANIFEST_PATH",
        "BackendBridge",
        "BackendContractError",
        "BackendUnavailableError",
        "ContractDisagreement",
        "Headers",
        "HttpxTransport",
        "ManifestFormatError",
        "ServedProcedureInfo",
        "Transport",
        "TransportError",
        "TransportResponse",
        "default_transport",
    ],
    "agent_surface.server": [
        "Audit",
        "Authenticate",
        "CallRecord",
        "Caller",
        "ConfirmationEvidence",
        "Implementation",
        "InvocationKey",
        "InvocationStore",
        "Outcome",
        "ProcedureCall",
        "ProcedureServer",
        "RateLimit",
        "RateLimiter",
        "Refusal",
        "ServedProcedure",
        "ServerLimits",
        "Settlement",
        "SqliteInvocationStore",
        "StoreMisuse",
        "VerifyConfirmation",
        "capability_error",
        "error_body",
        "execution_failed",
        "invalid_input",
        "not_authenticated",
        "not_authorized",
        "precondition_failed",
        "rate_limited",
        "serve",
    ],
    "agent_surface.compiler.load": ["authority_from_bundle", "authority_from_contract", "parse_contract"],
    "agent_surface.cli": ["main"],
    "agent_surface.browser.jsvalues": ["is_nullish", "js_get", "js_or_none"],
    "agent_surface.page": [
        "INSTANCE_ATTRIBUTE",
        "Attachment",
        "CallEntry",
        "Coalescer",
        "ConfirmationDialog",
        "PageDom",
        "PageSurface",
        "State",
        "SurfaceInspector",
        "ToolRow",
        "attach",
        "install_confirmation_dialog",
        "install_surface_inspector",
        "mount",
        "notify_state_changed",
        "on_state_change",
        "page_surface",
    ],
}

# Every module directly under agent_surface, classified. A new one needs a decision here.
TOP_LEVEL: dict[str, str] = {
    "__main__": "entry point (python -m agent_surface)",
    "adapters": "public through adapters.webmcp",
    "bridge": "public",
    "browser": "internal page code; public through browser.jsvalues",
    "catalog": "internal",
    "cli": "public (the agent-surface command)",
    "compat": "internal",
    "compiler": "public through compiler.load",
    "core": "internal",
    "page": "public (the page API: runs in the browser)",
    "explain": "public",
    "server": "public",
    "testing": "public",
    "toolset": "public",
    "wire_names": "public",
}


def exported(module: ModuleType) -> list[str]:
    """``__all__``, or for a module without one the functions and classes it defines."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return sorted(names)
    return sorted(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    )


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_public_module_exports_exactly_its_pinned_names(name: str) -> None:
    module = importlib.import_module(name)
    assert exported(module) == sorted(PUBLIC[name])
    missing = [attr for attr in PUBLIC[name] if not hasattr(module, attr)]
    assert missing == []


def test_every_top_level_module_is_classified() -> None:
    found = {info.name for info in pkgutil.iter_modules(agent_surface.__path__)}
    assert found == set(TOP_LEVEL)


@pytest.mark.parametrize("name", ["agent_surface.catalog", "agent_surface.compat"])
def test_internal_top_level_modules_say_so(name: str) -> None:
    doc = importlib.import_module(name).__doc__ or ""
    assert "Internal" in doc


def test_the_error_matrix_is_a_read_only_view() -> None:
    with pytest.raises(TypeError):
        agent_surface.ERROR_MATRIX["CANCELLED"] = agent_surface.ERROR_MATRIX["CANCELLED"]  # type: ignore[index]
    assert "CAPABILITY_NOT_FOUND" in agent_surface.ERROR_MATRIX


def test_factories_take_real_keywords() -> None:
    """No ``**options: Any``: a misspelt option is a TypeError at the call, not silence."""
    import inspect

    from agent_surface.adapters.webmcp import create_webmcp_adapter
    from agent_surface.testing import create_test_surface
    from agent_surface.toolset import create_agent_toolset

    for factory in (agent_surface.create_registry, create_agent_toolset, create_webmcp_adapter, create_test_surface):
        kinds = {p.kind for p in inspect.signature(factory).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, factory.__qualname__


def _imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("agent_surface"):
            out.append((node.module or "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names if a.name.startswith("agent_surface"))
    return out


def _imports_in_readme() -> list[tuple[str, list[str]]]:
    """Every example block must parse (top-level await allowed, as in the page)."""
    text = (ROOT / "README.md").read_text()
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    return [
        found
        for block in re.findall(r"```python\n(.*?)```", text, re.S)
        for found in _imports(compile(block, "README.md", "exec", flags=flags))
    ]


def _check(where: str, imports: list[tuple[str, list[str]]]) -> list[str]:
    problems = []
    for module, names in imports:
        if module not in PUBLIC:
            problems.append(f"{where}: imports internal module {module}")
            continue
        problems.extend(f"{where}: {module}.{n} is not public" for n in names if n not in PUBLIC[module])
    return problems


def test_the_readme_uses_public_imports_only() -> None:
    imports = _imports_in_readme()
    assert imports, "the README's examples import nothing?"
    assert _check("README.md", imports) == []


def test_the_demo_uses_public_imports_only() -> None:
    problems: list[str] = []
    files = sorted((ROOT / "demo").rglob("*.py"))
    assert files
    for path in files:
        where = str(path.relative_to(ROOT))
        imports = _imports(ast.parse(path.read_text(), where))
        problems += _check(where, imports)
    assert problems == []
