"""The public surface, pinned: what each public module exports, which top-level modules are
public, and that the docs (README.md, docs/) and the demo import nothing else. Changing any of it is a
reviewed change to this file."""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pytest

import agentsurface

ROOT = Path(__file__).resolve().parents[3]

PUBLIC: dict[str, list[str]] = {
    "agentsurface": [
        "ActionContext",
        "AgentComponent",
        "AgentSurfaceError",
        "AgentSurfaceRegistry",
        "AuditEvent",
        "AuditSink",
        "AuthorityError",
        "CancelSignal",
        "CapabilityAuthority",
        "CapabilityFailure",
        "Change",
        "ConsoleAuditSink",
        "Consumer",
        "Decision",
        "DefinitionError",
        "ErrorCode",
        "ErrorPayload",
        "Invocation",
        "InvocationResult",
        "JsonValue",
        "Limits",
        "MemoryAuditSink",
        "PendingConfirmation",
        "Policy",
        "PolicyContext",
        "PreconditionFailure",
        "Preview",
        "ProcedureContract",
        "ProcedureReference",
        "ReadContext",
        "RegistryClosedError",
        "Retry",
        "SurfaceEvent",
        "action",
        "audit",
        "authenticated",
        "compile_manifest",
        "environment",
        "error",
        "has_permission",
        "observation",
        "rate_limit",
        "require_confirmation",
        "surface_shut_down",
        "tenant_boundary",
    ],
    "agentsurface.lowlevel": [
        "ActionBinding",
        "ActionContract",
        "ActionDescriptor",
        "ActionOptions",
        "Budget",
        "Clock",
        "ComponentBinding",
        "ComponentContract",
        "ComponentDescriptor",
        "Concurrency",
        "ERROR_MATRIX",
        "EVENT_TYPES",
        "ErrorSpec",
        "Invalid",
        "Issue",
        "ObservationBinding",
        "ObservationContract",
        "ObservationDescriptor",
        "ObservationOptions",
        "ProcedureDescriptor",
        "ProcedureExecutor",
        "RegistrationHandle",
        "RouteProcedureOptions",
        "Schema",
        "SchemaSource",
        "Snapshot",
        "SystemClock",
        "Valid",
        "canonical_json",
        "schema_from_json",
        "schema_from_type",
    ],
    "agentsurface.testing": [
        "AgentCall",
        "AgentClientError",
        "CapturedRef",
        "DialogSelectors",
        "ImpureObservation",
        "InvocationFailed",
        "ManualClock",
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
        "with_features",
        "with_webmcp",
    ],
    "agentsurface.toolset": [
        "AgentTool",
        "AgentToolset",
        "ConfirmationMode",
        "Mode",
        "Target",
        "ToolState",
        "Topology",
        "capability_state",
        "describe_prefix",
    ],
    "agentsurface.adapters.webmcp": [
        "ConfirmHook",
        "Curation",
        "Descriptor",
        "ModelContext",
        "ModelContextError",
        "Shape",
        "ToolCall",
        "WebMCPAdapter",
        "WebMCPTool",
    ],
    "agentsurface.explain": ["CapabilityExplanation", "PolicyVote", "explain_surface"],
    "agentsurface.wire_names": [
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
    "agentsurface.bridge": [
        "CALLABLE_PATH",
        "CHANNEL_HEADER",
        "MANIFEST_PATH",
        "BackendBridge",
        "BackendContractError",
        "BackendUnavailableError",
        "ContractDisagreement",
        "Headers",
        "HttpxTransport",
        "ManifestFormatError",
        "Presence",
        "ServedProcedureInfo",
        "ServerChallenge",
        "Transport",
        "TransportError",
        "TransportResponse",
        "default_transport",
    ],
    "agentsurface.server": [
        "READY_PATH",
        "SCHEMA_VERSION",
        "Approval",
        "ApprovalLevel",
        "Audit",
        "Authenticate",
        "CallRecord",
        "Caller",
        "Challenge",
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
        "SharedRateLimiter",
        "SqliteInvocationStore",
        "StoreConfigError",
        "StoreMisuse",
        "StoreUnavailable",
        "StoreVersionError",
        "VerifyConfirmation",
        "VerifyPresence",
        "capability_error",
        "describe_dsn",
        "error_body",
        "execution_failed",
        "invalid_input",
        "not_authenticated",
        "not_authorized",
        "open_store",
        "precondition_failed",
        "rate_limited",
        "refusal_response",
        "retry_after_header",
        "run",
        "serve",
        "server_config",
        "sqlite_path",
        "store_kind",
    ],
    "agentsurface.fastapi": ["AgentProcedures", "procedure"],
    "agentsurface.django": ["AgentViews", "DjangoInvocationStore", "procedure", "user_caller"],
    "agentsurface.compiler.load": [
        "ExternalContractError",
        "authority_from_bundle",
        "authority_from_contract",
        "parse_contract",
        "procedures_from_bundle",
        "procedures_from_contract",
    ],
    "agentsurface.cli": ["main"],
    "agentsurface.browser.jsvalues": ["attribute", "closest", "is_nullish", "js_get", "js_or_none"],
    "agentsurface.browser.passkeys": [
        "PROCEDURE_ADD_OPTIONS",
        "PROCEDURE_ASSERTION_OPTIONS",
        "PROCEDURE_LIST",
        "PROCEDURE_OPTIONS",
        "PROCEDURE_REGISTER",
        "PROCEDURE_REMOVE",
        "PROCEDURE_RENAME",
        "PasskeyError",
        "add_passkey",
        "assert_presence",
        "create_credential",
        "list_passkeys",
        "passkey_presence",
        "passkeys_supported",
        "register_passkey",
        "remove_passkey",
        "rename_passkey",
        "replace_passkey",
    ],
    "agentsurface.server.passkeys": [
        "ADD_OPTIONS",
        "ASSERTION_OPTIONS",
        "LIST",
        "MAX_NAME",
        "PROCEDURE_ADD_OPTIONS",
        "PROCEDURE_ASSERTION_OPTIONS",
        "PROCEDURE_LIST",
        "PROCEDURE_OPTIONS",
        "PROCEDURE_REENROL",
        "PROCEDURE_REGISTER",
        "PROCEDURE_REMOVE",
        "PROCEDURE_RENAME",
        "REENROL",
        "REGISTER",
        "REGISTRATION_OPTIONS",
        "REMOVE",
        "RENAME",
        "AssertionReason",
        "ManagementReason",
        "ManagementRefused",
        "PasskeyConfig",
        "PasskeyError",
        "PasskeyListing",
        "Passkeys",
        "Reenrolment",
        "RegisteredPasskey",
        "RegistrationReason",
        "RegistrationRefused",
        "clean_name",
        "passkey_procedures",
    ],
    "agentsurface.page.relay": ["RelayConnection", "connect_relay"],
    "agentsurface.page": [
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
        "dependencies_ready",
        "notify_state_changed",
        "on_state_change",
        "page_surface",
        "preload_validators",
    ],
}

# Every module directly under agentsurface, classified. A new one needs a decision here.
TOP_LEVEL: dict[str, str] = {
    "_catalog": "internal",
    "_compat": "internal",
    "_core": "internal",
    "_runtime_build": "internal (the offline runtime build behind bundle)",
    "__main__": "entry point (python -m agentsurface)",
    "adapters": "public through adapters.webmcp",
    "bridge": "public",
    "browser": "internal page code; public through browser.jsvalues and browser.passkeys",
    "cli": "public (the agentsurface command)",
    "mcp_server": "internal (the agentsurface mcp command; extra [mcp])",
    "compiler": "public through compiler.load",
    "django": "public (procedures from a Django project's views; extra [django])",
    "fastapi": "public (procedures from a FastAPI app's routes; extra [fastapi])",
    "page": "public (the page API: runs in the browser)",
    "explain": "public",
    "lowlevel": "public (what the authoring API compiles to: contracts, bindings, descriptors, schemas)",
    "server": "public",
    "testing": "public",
    "toolset": "public",
    "wire_names": "public",
}


# Every module directly under agentsurface.server, classified. A new one needs a decision here.
SERVER_PARTS: dict[str, str] = {
    "app": "internal; ProcedureServer public through agentsurface.server",
    "audit_trail": "internal",
    "body": "internal",
    "challenges": "internal (approval challenges); their names public through agentsurface.server",
    "config": "internal; its names public through agentsurface.server",
    "envelope": "internal",
    "errors": "internal; its names public through agentsurface.server",
    "evidence": "internal; VerifyConfirmation public through agentsurface.server",
    "passkeys": "public (extra [server] brings webauthn)",
    "procedures": "internal; its names public through agentsurface.server",
    "ratelimit": "internal; its names public through agentsurface.server",
    "routes": "internal (what agentsurface.fastapi and agentsurface.django share)",
    "running": "internal; run and server_config public through agentsurface.server",
    "stores": "internal (SQLite, PostgreSQL, open_store by DSN); their names public through agentsurface.server",
    "throttle": "internal",
    "upkeep": "internal",
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


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_no_public_module_serves_names_beside_its_pinned_ones(name: str) -> None:
    """One set of names: no module ``__getattr__`` (a deprecated alias, a lazy extra) answers
    a name the module does not export. The package's own serves ``__version__`` alone, read from
    the installed metadata on first access (tests/unit/test_version.py)."""
    module = importlib.import_module(name)
    if name != "agentsurface":
        assert "__getattr__" not in vars(module)
        return
    lazy = vars(module)["__getattr__"]
    assert lazy("__version__") == importlib.metadata.version("agentsurface")
    for other in ("version", "VERSION", "__author__", "create_registry", "ManualClock", "Refusal", "x"):
        with pytest.raises(AttributeError):
            lazy(other)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("agentsurface", "create_registry"),
        ("agentsurface", "CapabilityError"),
        ("agentsurface", "RegistryDisposedError"),
        ("agentsurface", "ManualClock"),
        ("agentsurface", "import_jsonschema"),
        # The factories beside their classes, and what the authoring API compiles to (lowlevel).
        ("agentsurface", "create_capability_authority"),
        ("agentsurface", "memory_audit_sink"),
        ("agentsurface", "console_audit_sink"),
        ("agentsurface", "ActionContract"),
        ("agentsurface", "Schema"),
        ("agentsurface", "ERROR_MATRIX"),
        ("agentsurface.page", "attach"),
        ("agentsurface.page", "mount"),
        ("agentsurface.page", "install_confirmation_dialog"),
        ("agentsurface.page", "install_surface_inspector"),
        ("agentsurface.toolset", "create_agent_toolset"),
        ("agentsurface.adapters.webmcp", "create_webmcp_adapter"),
        # The executor is a constructor argument only: AgentSurfaceRegistry(procedure_executor=...).
        ("agentsurface", "AgentSurfaceRegistry.set_procedure_executor"),
        ("agentsurface", "AgentSurfaceRegistry.procedure_executor"),
    ],
)
def test_names_never_released_are_gone(module: str, name: str) -> None:
    """``name`` may be dotted: a class's attribute."""
    *owners, last = name.split(".")
    found: object = importlib.import_module(module)
    for owner in owners:
        found = getattr(found, owner)
    with pytest.raises(AttributeError):
        getattr(found, last)


def test_the_registry_takes_its_executor_at_construction_only() -> None:
    registry = agentsurface.AgentSurfaceRegistry
    assert "procedure_executor" in inspect.signature(registry).parameters
    assert not [name for name in dir(registry) if name.startswith("set_")]  # no setter, by any name


def test_each_teardown_has_one_verb() -> None:
    from agentsurface.adapters.model_context import ModelContext
    from agentsurface.adapters.relay_context import RelayModelContext
    from agentsurface.adapters.webmcp import WebMCPAdapter
    from agentsurface.lowlevel import RegistrationHandle
    from agentsurface.mcp_server.page import PageLink
    from agentsurface.mcp_server.relay.link import RelayLink
    from agentsurface.mcp_server.relay.listener import RelayListener
    from agentsurface.page import Attachment, ConfirmationDialog, PageSurface, SurfaceInspector
    from agentsurface.page.dialog import DialogView
    from agentsurface.testing import TestSurface
    from agentsurface.toolset import AgentToolset

    owners = (
        agentsurface.AgentSurfaceRegistry,
        AgentToolset,
        TestSurface,
        WebMCPAdapter,
        Attachment,
        RegistrationHandle,
        ModelContext,
        RelayModelContext,
        DialogView,
        ConfirmationDialog,
        PageSurface,
        SurfaceInspector,
        PageLink,
        RelayLink,
        RelayListener,
    )
    leftovers = {
        (cls.__name__, verb)
        for cls in owners
        for verb in ("dispose", "disposed", "stop", "detach", "unregister", "uninstall")
        if hasattr(cls, verb)
    }
    assert leftovers == set()
    # What awaits ends with aclose(), what does not with close(): never an awaitable close().
    import inspect

    for cls in owners:
        close = getattr(cls, "close", None)
        assert close is None or not inspect.iscoroutinefunction(close), cls.__name__


def test_every_top_level_module_is_classified() -> None:
    found = {info.name for info in pkgutil.iter_modules(agentsurface.__path__)}
    assert found == set(TOP_LEVEL)


def test_every_part_of_the_server_is_classified() -> None:
    import agentsurface.server

    found = {info.name for info in pkgutil.iter_modules(agentsurface.server.__path__)}
    assert found == set(SERVER_PARTS)


@pytest.mark.parametrize("name", ["agentsurface._catalog", "agentsurface._compat"])
def test_internal_top_level_modules_say_so(name: str) -> None:
    doc = importlib.import_module(name).__doc__ or ""
    assert "Internal" in doc


def test_the_error_matrix_is_a_read_only_view() -> None:
    from agentsurface.lowlevel import ERROR_MATRIX

    with pytest.raises(TypeError):
        ERROR_MATRIX["CANCELLED"] = ERROR_MATRIX["CANCELLED"]  # type: ignore[index]
    assert "CAPABILITY_NOT_FOUND" in ERROR_MATRIX


def test_factories_take_real_keywords() -> None:
    """No ``**options: Any``: a misspelt option is a TypeError at the call, not silence."""
    import inspect

    from agentsurface.adapters.webmcp import WebMCPAdapter
    from agentsurface.testing import create_test_surface
    from agentsurface.toolset import AgentToolset

    for factory in (agentsurface.AgentSurfaceRegistry, AgentToolset, WebMCPAdapter, create_test_surface):
        kinds = {p.kind for p in inspect.signature(factory).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, factory.__qualname__


def _imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("agentsurface"):
            out.append((node.module or "", [alias.name for alias in node.names]))
        elif isinstance(node, ast.Import):
            out.extend((a.name, []) for a in node.names if a.name.startswith("agentsurface"))
    return out


def _imports_in_docs() -> dict[str, list[tuple[str, list[str]]]]:
    """The imports of every Python example of README.md and the docs pages, by page. Every block
    must parse (top-level await allowed, as in the page)."""
    flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        where = path.relative_to(ROOT).as_posix()
        found[where] = [
            imported
            for block in re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
            for imported in _imports(compile(block, where, "exec", flags=flags))
        ]
    return found


def _check(where: str, imports: list[tuple[str, list[str]]]) -> list[str]:
    problems = []
    for module, names in imports:
        if module not in PUBLIC:
            problems.append(f"{where}: imports internal module {module}")
            continue
        problems.extend(f"{where}: {module}.{n} is not public" for n in names if n not in PUBLIC[module])
    return problems


def test_the_docs_use_public_imports_only() -> None:
    imports = _imports_in_docs()
    assert imports["README.md"], "the README's example imports nothing?"
    assert sum(len(found) for found in imports.values()) >= 20, "the docs' examples import nothing?"
    assert [problem for where, found in imports.items() for problem in _check(where, found)] == []


def test_the_demo_uses_public_imports_only() -> None:
    problems: list[str] = []
    files = sorted((ROOT / "demo").rglob("*.py"))
    assert files
    for path in files:
        where = str(path.relative_to(ROOT))
        imports = _imports(ast.parse(path.read_text(), where))
        problems += _check(where, imports)
    assert problems == []


# What only the page has: a module importing one of these is checked in the browser, not here.
BROWSER_ONLY = {"js", "pyodide", "pyodide_js", "pyscript"}


def _importable_modules() -> tuple[list[ModuleType], list[str]]:
    """Every module of the package, imported; and the names of those that need the browser.
    Any other import failure (a missing extra, a broken module) fails the caller's test."""
    imported: list[ModuleType] = []
    browser_only: list[str] = []
    for info in pkgutil.walk_packages(agentsurface.__path__, "agentsurface."):
        try:
            imported.append(importlib.import_module(info.name))
        except ModuleNotFoundError as exc:
            if (exc.name or "").split(".")[0] not in BROWSER_ONLY:
                raise
            browser_only.append(info.name)
    return imported, browser_only


def _library_classes() -> list[type]:
    found: list[type] = []
    for module in _importable_modules()[0]:
        found += [
            value
            for value in vars(module).values()
            if isinstance(value, type) and value.__module__ == module.__name__
        ]
    return found


def test_only_the_browser_helpers_need_the_browser_to_import() -> None:
    """The walk below skips only these: the page's own helpers (the import-linter contract lets
    nothing else import js or pyodide), so a skipped module cannot hide an exception class."""
    imported, browser_only = _importable_modules()
    assert browser_only and all(name.startswith("agentsurface.browser.") for name in browser_only)
    assert {"agentsurface.server", "agentsurface.cli", "agentsurface.mcp_server", "agentsurface.page"} <= {
        module.__name__ for module in imported
    }


def test_every_exception_the_library_defines_derives_from_one_root() -> None:
    """Every exception class of the package, public or private, derives from AgentSurfaceError:
    ``except agentsurface.AgentSurfaceError`` catches whatever the library raises of its own."""
    exceptions = [cls for cls in _library_classes() if issubclass(cls, BaseException)]
    assert len(exceptions) > 30  # the walk found the package's exceptions
    outside = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in exceptions
        if not issubclass(cls, agentsurface.AgentSurfaceError)
    ]
    assert outside == []


def test_exceptions_keep_the_builtin_base_callers_rely_on() -> None:
    from agentsurface import server
    from agentsurface.browser.passkeys import PasskeyError as PagePasskeyError
    from agentsurface.server.passkeys import PasskeyError, RegistrationRefused

    assert issubclass(agentsurface.CapabilityFailure, agentsurface.AgentSurfaceError)
    assert issubclass(agentsurface.AuthorityError, agentsurface.DefinitionError)
    assert issubclass(agentsurface.RegistryClosedError, RuntimeError)
    assert issubclass(server.Refusal, agentsurface.AgentSurfaceError)
    assert issubclass(server.StoreConfigError, ValueError) and issubclass(server.StoreMisuse, RuntimeError)
    assert issubclass(PasskeyError, ValueError) and issubclass(RegistrationRefused, ValueError)
    assert issubclass(PagePasskeyError, agentsurface.AgentSurfaceError)
    assert not issubclass(agentsurface.ErrorPayload, BaseException)  # the value a result carries


def test_no_two_public_classes_share_a_name() -> None:
    seen: dict[str, str] = {}
    clashes = []
    for cls in _library_classes():
        if cls.__name__.startswith("_") or cls.__module__.startswith("agentsurface.browser."):
            continue  # the page's helpers mirror the server's passkey names on purpose
        where = f"{cls.__module__}.{cls.__qualname__}"
        if cls.__name__ in seen and seen[cls.__name__] != where:
            clashes.append((seen[cls.__name__], where))
        seen.setdefault(cls.__name__, where)
    assert clashes == []


def test_one_teardown_story_close_aclose_and_context_managers() -> None:
    import asyncio

    from agentsurface.adapters.webmcp import WebMCPAdapter
    from agentsurface.testing import create_test_surface
    from agentsurface.toolset import AgentToolset

    authority = agentsurface.CapabilityAuthority.from_manifest(agentsurface.compile_manifest([]))
    with agentsurface.AgentSurfaceRegistry(authority=authority) as registry:
        with AgentToolset(registry, consumer=agentsurface.Consumer("c", "test"), topology="embedded") as tools:
            assert tools.tools() == []
        assert not registry.closed
    assert registry.closed
    with pytest.raises(agentsurface.RegistryClosedError):
        registry.snapshot()

    async def adapter_scope() -> None:
        async with WebMCPAdapter() as adapter:
            assert adapter.shape is None

    asyncio.run(adapter_scope())
    with create_test_surface(authority=authority) as surface:
        assert not surface.registry.closed
    assert surface.registry.closed
