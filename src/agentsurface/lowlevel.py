"""What the authoring API compiles to, for tools and tests built on the library.

An app declares its surface with ``agentsurface`` (``AgentComponent``, ``action``,
``observation``, ``ProcedureContract``, ``AgentSurfaceRegistry``...). This module holds the rest of
the public surface: the frozen contracts a component class compiles to, the options the
decorators pass to them (``ActionOptions``...: the keywords of ``@action(...)``), the bindings of a
registration (a contract plus the callables that run it), the descriptors a registry's snapshot
lists, the schema subset and its checks, the canonical JSON the digests are computed over, the
closed table of error codes, the surface's event types, and the clock and executor protocols a
registry takes. Nothing here is needed to write an app; everything here is stable in the same way
as the top level (the repository's ``tests/unit/project/test_public_api.py`` pins both).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._core import errors as _errors
from ._core.clock import Clock, SystemClock
from ._core.contracts import (
    ActionBinding,
    ActionContract,
    ComponentBinding,
    ComponentContract,
    Concurrency,
    ObservationBinding,
    ObservationContract,
)
from ._core.contracts.fields import SchemaSource
from ._core.contracts.options import ActionOptions, ObservationOptions, RouteProcedureOptions
from ._core.errors import ErrorCode, ErrorSpec
from ._core.events import EVENT_TYPES
from ._core.jsonvalue import canonical_json
from ._core.pipeline import ProcedureExecutor
from ._core.registry.descriptors import (
    ActionDescriptor,
    Budget,
    ComponentDescriptor,
    ObservationDescriptor,
    ProcedureDescriptor,
    Snapshot,
)
from ._core.registry.registry import RegistrationHandle
from ._core.schemas.schema import Invalid, Issue, Schema, Valid, schema_from_json, schema_from_type

ERROR_MATRIX: Mapping[ErrorCode, ErrorSpec] = MappingProxyType(_errors.ERROR_MATRIX)
"""The closed set of error codes: each code's phases, retry hints, HTTP status and agent-safe
detail keys (a read-only view)."""

__all__ = [
    "ERROR_MATRIX",
    "EVENT_TYPES",
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
]
