"""How the surface looks to the browser: one snapshot projected as WebMCP tools (names, titles,
curated descriptions, contract-derived annotations, inlined input schemas) and a result as tool
content."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import TYPE_CHECKING, Any

from .._catalog import CatalogEntry, Descriptor, Target, catalog_entries
from .._core.contracts.kinds import READ_ONLY_EFFECTS
from .._core.errors import DefinitionError
from .._core.jsonvalue import JsonValue, canonical_json, plain_encoder, thaw
from .._core.pipeline.invocation import InvocationResult
from .._core.registry.descriptors import ProcedureDescriptor, Snapshot
from .._core.schemas.schema import inline_refs
from ..wire_names import assign_wire_names
from .model_context import ToolExecute, WebMCPTool

if TYPE_CHECKING:  # meta mode only: direct mode never loads the toolset
    from ..toolset import AgentTool

# ``False`` skips the capability, a mapping rewords it (``{"description": ...}``), and ``None`` or
# ``True`` keep it as authored: a hook that forgets to return must not hide the whole surface.
Curation = Callable[[Descriptor], Mapping[str, str] | bool | None]
Diagnose = Callable[[str], None]


def content(result: InvocationResult) -> dict[str, Any]:
    """Tool content for a result: capability errors ride in content with code/retry/details."""
    if result.ok:
        return {"content": [{"type": "text", "text": _output_text(result.output)}]}
    assert result.error is not None
    return {"content": [{"type": "text", "text": canonical_json(result.error.to_json())}], "isError": True}


_content_text = plain_encoder(ensure_ascii=True)


def content_json(result: InvocationResult) -> str:
    """``content(result)`` as compact ASCII JSON text, the form the page hands the browser: a
    result's text is escaped into place, not built as a dict and encoded again."""
    if result.ok:
        return '{"content":[{"type":"text","text":' + encode_basestring_ascii(_output_text(result.output)) + "}]}"
    return _content_text(content(result))


def _output_text(output: JsonValue) -> str:
    return "null" if output is None else canonical_json(output)


def annotations_for(descriptor: Descriptor, shape: str) -> dict[str, bool]:
    """Derived from the contract only (kind, effect, confirmation, declared untrusted output).

    WebMCP's own hints (``readOnlyHint``, ``consequentialHint``, ``untrustedContentHint``) and,
    beside them, MCP's (``destructiveHint``, ``idempotentHint``, ``openWorldHint``): a bridge that
    forwards only MCP's (MCP-B) still tells its client which calls need the person."""
    read_only = descriptor.kind == "observation" or descriptor.effect in READ_ONLY_EFFECTS
    out: dict[str, bool] = {"readOnlyHint": read_only}
    if shape != "abortable":  # the draft's tool shape knows readOnlyHint only
        return out if read_only else {}
    if read_only:
        out["idempotentHint"] = True  # reading twice changes nothing
    if descriptor.effect in ("destructive", "external-side-effect") or descriptor.confirmation == "required":
        out["consequentialHint"] = True
        if not read_only:
            out["destructiveHint"] = True
    elif not read_only:
        out["destructiveHint"] = False  # MCP's default for a write is destructive: say it is not
    if descriptor.untrusted_output:
        out["untrustedContentHint"] = True
        out["openWorldHint"] = True
    return out


_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def title_for(descriptor: Descriptor, component_type: str | None, instance_id: str | None) -> str:
    """A human title from the capability: ``selectRows`` on devices.table → 'Select rows (devices table)'."""
    if isinstance(descriptor, ProcedureDescriptor):
        path = descriptor.procedure_id.split(":", 1)[1]
        *scope, name = path.split(".")
        where = " ".join(scope)
    else:
        name = descriptor.name
        where = (component_type or "").replace(".", " ")
    words = _WORD.findall(name) or [name]
    label = " ".join(w.lower() for w in words).capitalize()
    suffix = f" ({where}{' @ ' + instance_id if instance_id else ''})" if where else ""
    return (label + suffix)[:128]


class DirectProjection:
    """One WebMCP tool per exposed capability of a snapshot, with the target each name calls."""

    def __init__(self, curate: Curation | None, diagnose: Diagnose) -> None:
        self._curate = curate
        self._diagnose = diagnose
        self._schema_warned: set[str] = set()
        # Wire schemas by (registration, capability): structure is frozen per registration, so a
        # surface change need not inline every tool's schema again.
        self._wire_schemas: dict[tuple[str | None, str], dict[str, Any]] = {}

    def project(
        self, snapshot: Snapshot, shape: str, executor_for: Callable[[str], ToolExecute]
    ) -> tuple[dict[str, WebMCPTool], dict[str, Target]]:
        """The tools to expose, by name, and the call target behind each name."""
        kept: list[tuple[CatalogEntry, str]] = []
        for entry in catalog_entries(snapshot):
            text = self._curated(entry.descriptor)
            if text is not None:
                kept.append((entry, text))
        names = assign_wire_names(entry.wire for entry, _ in kept).names
        tools: dict[str, WebMCPTool] = {}
        targets: dict[str, Target] = {}
        schemas: dict[tuple[str | None, str], dict[str, Any]] = {}
        for (entry, text), name in zip(kept, names, strict=True):
            descriptor, target = entry.descriptor, entry.target
            description = f"{entry.prefix} {text}"
            key = (target.registration_id, descriptor.capability_id)
            wire_schema = schemas[key] = self._wire_schemas.get(key) or self._wire_schema(
                descriptor.capability_id, entry.input_schema
            )
            notes = annotations_for(descriptor, shape)
            title = title_for(descriptor, entry.component_type, entry.wire.qualifier)
            signature = canonical_json([name, title, description, wire_schema, notes, target.registration_id])
            tools[name] = WebMCPTool(name, title, description, wire_schema, notes, executor_for(name), signature)
            targets[name] = target
        self._wire_schemas = schemas  # only what the current surface uses
        return tools, targets

    def _wire_schema(self, capability_id: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return inline_refs(thaw(schema))
        except DefinitionError as exc:
            # A recursive schema cannot be inlined: expose it as authored rather than failing
            # the whole projection (and every other tool with it); say so once.
            if capability_id not in self._schema_warned:
                self._schema_warned.add(capability_id)
                self._diagnose(f"{capability_id}: {exc.message}; its input schema keeps $ref")
            return dict(thaw(schema))

    def _curated(self, descriptor: Descriptor) -> str | None:
        """The authored text to expose, or None to skip. Curation never touches execution or
        annotations."""
        if self._curate is None:
            return descriptor.description
        try:
            verdict = self._curate(descriptor)
        except Exception as exc:
            self._diagnose(f"expose_capability raised for {descriptor.capability_id}: {exc}; skipping it")
            return None
        if verdict is False:
            return None
        if verdict is None or verdict is True:
            return descriptor.description
        if not isinstance(verdict, Mapping):
            self._diagnose(
                f"expose_capability returned {type(verdict).__name__} for {descriptor.capability_id}; "
                "expected False (skip), a mapping (reword) or None/True (keep); keeping it as authored"
            )
            return descriptor.description
        text = verdict.get("description")
        return text if isinstance(text, str) and text else descriptor.description


def project_meta(
    tools: Sequence[AgentTool], executor_for: Callable[[AgentTool], ToolExecute]
) -> dict[str, WebMCPTool]:
    """The toolset's three meta verbs as WebMCP tools (they resolve targets on every call)."""
    out: dict[str, WebMCPTool] = {}
    for tool in tools:
        notes = {"readOnlyHint": tool.name != "surface_act"}
        schema = thaw(tool.input_schema)
        signature = canonical_json([tool.name, tool.description, schema, notes])
        title = tool.name.replace("_", " ").capitalize()
        out[tool.name] = WebMCPTool(
            tool.name, title, tool.description, schema, notes, executor_for(tool), signature
        )
    return out
