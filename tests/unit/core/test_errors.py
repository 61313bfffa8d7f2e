"""Errors: the closed agent-facing code set against the reference error matrix, the author-facing
DefinitionError, and typed errors naming the offending part for bad input to public constructors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentsurface import (
    AgentSurfaceRegistry,
    AuthorityError,
    CapabilityAuthority,
    CapabilityFailure,
    Consumer,
    DefinitionError,
    ErrorPayload,
    Limits,
    ProcedureContract,
    compile_manifest,
)
from agentsurface._core.errors import ERROR_MATRIX, MAX_ERROR_MESSAGE, error
from agentsurface.lowlevel import (
    ActionContract,
    Budget,
    ComponentContract,
    Concurrency,
    ObservationContract,
    schema_from_json,
    schema_from_type,
)
from tests.support import devices_contract

# The shared reference data sits beside the repository (as in CI: ../shared).
REFERENCE = Path(__file__).resolve().parents[4] / "shared" / "reference" / "error-matrix.json"


def test_error_matrix_matches_the_reference_exactly() -> None:
    codes = json.loads(REFERENCE.read_text())["codes"]
    assert set(codes) == set(ERROR_MATRIX)
    for code, row in codes.items():
        spec = ERROR_MATRIX[code]  # type: ignore[index]
        assert list(spec.phases) == row["phases"], code
        assert list(spec.retry) == row["retry"], code
        assert spec.cacheable is row["cacheable"], code
        assert list(spec.reference_details) == row["details"], code


def test_capability_error_defaults_retry_and_drops_empty_details() -> None:
    err = error("CAPABILITY_NOT_AVAILABLE", "Select rows first", reason="no-selection", ignored=None)
    assert err.retry == "after-refresh"
    assert err.to_json() == {
        "code": "CAPABILITY_NOT_AVAILABLE",
        "message": "Select rows first",
        "retry": "after-refresh",
        "details": {"reason": "no-selection"},
    }
    assert err.cacheable is True
    assert error("NOT_AUTHENTICATED", "Sign in").to_json() == {
        "code": "NOT_AUTHENTICATED",
        "message": "Sign in",
        "retry": "no",
    }
    assert error("RATE_LIMITED", "Slow down").cacheable is False


def test_capability_error_refuses_unknown_codes_and_disallowed_retries() -> None:
    with pytest.raises(ValueError, match="unknown error code 'TEAPOT'"):
        ErrorPayload("TEAPOT", "x", "no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="retry 'yes' is not allowed for NOT_AUTHORIZED"):
        ErrorPayload("NOT_AUTHORIZED", "x", "yes")
    assert error("TIMEOUT", "Timed out", retry="yes").retry == "yes"


def test_capability_error_messages_are_capped() -> None:
    err = error("EXECUTION_FAILED", "x" * 1000)
    assert len(err.message) == MAX_ERROR_MESSAGE
    assert err.message.endswith("…")


def test_agentsurface_error_carries_the_capability_error() -> None:
    err = error("PRECONDITION_FAILED", "Unknown ids", reason="unknown-ids")
    raised = CapabilityFailure(err)
    assert raised.error is err
    assert str(raised) == "PRECONDITION_FAILED: Unknown ids"


def test_definition_error_locates_itself() -> None:
    err = DefinitionError("UNSUPPORTED_SCHEMA", "keyword 'oneOf' is outside the supported subset", path="$.oneOf")
    assert str(err) == "[UNSUPPORTED_SCHEMA] $.oneOf: keyword 'oneOf' is outside the supported subset"
    located = err.at("input").at("devices.table.selectRows")
    assert located.path == "devices.table.selectRows.input.$.oneOf"
    assert located.code == "UNSUPPORTED_SCHEMA"
    assert located.message == err.message
    assert str(DefinitionError("INVALID_ID", "bad")) == "[INVALID_ID] bad"


def test_authority_error_is_a_definition_error_and_stays_one_when_located() -> None:
    err = AuthorityError("not in the manifest").at("contracts[2]")
    assert isinstance(err, AuthorityError)
    assert isinstance(err, DefinitionError)
    assert err.code == "AUTHORITY_VIOLATION"
    assert str(err) == "[AUTHORITY_VIOLATION] contracts[2]: not in the manifest"


# ----------------------------------------------------------------------------- bad input, every constructor


def _authority() -> Any:
    return CapabilityAuthority.from_manifest(compile_manifest([devices_contract()]))


BAD_INPUT: list[tuple[str, Any, type[Exception], str]] = [
    ("observation description", lambda: ObservationContract(42, output={"type": "object"}),  # type: ignore[arg-type]
     DefinitionError, "observation description must be a non-empty string"),
    ("observation output", lambda: ObservationContract("Read", output=42),
     DefinitionError, "cannot build a schema from 42"),
    ("observation untrusted_output", lambda: ObservationContract("Read", output={}, untrusted_output="yes"),  # type: ignore[arg-type]
     DefinitionError, "untrusted_output must be True or False"),
    ("action input", lambda: ActionContract("Go", input=[1, 2]),
     DefinitionError, "cannot build a schema from [1, 2]"),
    ("action effect", lambda: ActionContract("Go", effect=3),  # type: ignore[arg-type]
     DefinitionError, "effect must be a string, got 3"),
    ("action idempotent", lambda: ActionContract("Go", idempotent="yes"),  # type: ignore[arg-type]
     DefinitionError, "idempotent must be True or False, got 'yes'"),
    ("action timeout", lambda: ActionContract("Go", timeout="soon"),  # type: ignore[arg-type]
     DefinitionError, "timeout must be a positive number of seconds, got 'soon'"),
    ("action concurrency", lambda: ActionContract("Go", concurrency="parallel"),  # type: ignore[arg-type]
     DefinitionError, "concurrency must be a Concurrency"),
    ("component observations", lambda: ComponentContract(type="a.b", description="x", observations=["read"]),  # type: ignore[arg-type]
     DefinitionError, "observations must be a mapping"),
    ("component type", lambda: ComponentContract(type=5, description="x", actions={"go": ActionContract("Go")}),  # type: ignore[arg-type]
     DefinitionError, "component type must be a non-empty string, got 5"),
    ("component tags", lambda: ComponentContract(type="a.b", description="x", actions={"go": ActionContract("Go")}, tags="t"),
     DefinitionError, "tags must be a list of strings, got 't'"),
    ("procedure id", lambda: ProcedureContract(id=None, description="x", effect="server-query"),  # type: ignore[arg-type]
     DefinitionError, "capability id must be a non-empty string, got None"),
    ("procedure policies", lambda: ProcedureContract(id="domain:a.b", description="x", effect="server-query", policies="auth"),
     DefinitionError, "policies must be a list of strings, got 'auth'"),
    ("concurrency mode", lambda: Concurrency(mode=None),  # type: ignore[arg-type]
     DefinitionError, "unknown concurrency mode None"),
    ("consumer id", lambda: Consumer(""), ValueError, "consumer id must be a non-empty string"),
    ("consumer kind", lambda: Consumer("x", kind="robot"),  # type: ignore[arg-type]
     ValueError, "consumer kind must be one of"),
    ("consumer kind type", lambda: Consumer("x", kind=["webmcp"]),  # type: ignore[arg-type]
     ValueError, "consumer kind must be one of"),
    ("consumer grants", lambda: Consumer("x", grants="admin"),  # type: ignore[arg-type]
     TypeError, "consumer grants must be a list of strings, got 'admin'"),
    ("consumer grant items", lambda: Consumer("x", grants=[1]),  # type: ignore[list-item]
     TypeError, "consumer grants must be strings"),
    ("limits", lambda: Limits(action_queue_depth=-2), ValueError, "limit action_queue_depth must be a non-negative"),
    ("budget", lambda: Budget(max_bytes=-5), ValueError, "budget max_bytes must be a non-negative integer"),
    ("registry authority", lambda: AgentSurfaceRegistry(authority="token"),  # type: ignore[arg-type]
     AuthorityError, "a registry needs a CapabilityAuthority"),
    ("registry limits", lambda: AgentSurfaceRegistry(authority=_authority(), limits=5),
     TypeError, "limits must be a Limits instance, got 5"),
    ("authority manifest", lambda: CapabilityAuthority.from_manifest("manifest"),  # type: ignore[arg-type]
     AuthorityError, "manifest must be a JSON object"),
    ("schema_from_json", lambda: schema_from_json("string"),  # type: ignore[arg-type]
     DefinitionError, "a schema must be a JSON object, got str"),
    ("schema_from_type", lambda: schema_from_type(3), DefinitionError, "cannot build a schema from 3"),
]


@pytest.mark.parametrize(("what", "build", "error_type", "fragment"), BAD_INPUT, ids=[row[0] for row in BAD_INPUT])
def test_bad_input_to_public_constructors_raises_typed_errors_naming_the_part(
    what: str, build: Any, error_type: type[Exception], fragment: str
) -> None:
    with pytest.raises(error_type) as info:
        build()
    assert fragment in str(info.value), what


def test_the_wire_s_codes_and_statuses_come_from_the_error_matrix() -> None:
    """One table: what a procedure server may answer, and with which HTTP status, is the
    matrix's ``http_status``; the page-only codes have none."""
    from agentsurface._core.errors import ERROR_MATRIX as MATRIX
    from agentsurface.bridge.wire import HTTP_STATUS, SERVER_CODES

    assert {code for code, spec in MATRIX.items() if spec.http_status is not None} == SERVER_CODES
    assert dict(HTTP_STATUS) == {code: MATRIX[code].http_status for code in SERVER_CODES}
    assert {code for code in MATRIX if code not in SERVER_CODES} == {
        "CAPABILITY_NOT_AVAILABLE", "AMBIGUOUS_INSTANCE", "COMPONENT_UNMOUNTED", "STALE_CAPABILITY", "CANCELLED",
    }
    assert HTTP_STATUS["CONFIRMATION_REQUIRED"] == 428 and HTTP_STATUS["RATE_LIMITED"] == 429
    assert all(400 <= status < 600 for status in HTTP_STATUS.values())
