"""AS-ERR-001: the agent-facing error enum, retry categories, cacheability and details keys
agree with the reference error matrix, from one source (``ERROR_MATRIX``)."""

from __future__ import annotations

import typing

import pytest

from agentsurface import ErrorPayload
from agentsurface._core.errors import ERROR_MATRIX, ErrorCode, Retry, error

from .helpers import RETRY_VALUES, load_reference


@pytest.fixture(scope="module")
def reference() -> dict[str, dict[str, object]]:
    codes: dict[str, dict[str, object]] = load_reference("error-matrix.json")["codes"]
    return codes


def test_AS_ERR_001_codes_are_exactly_the_reference_set(reference: dict[str, dict[str, object]]) -> None:
    assert sorted(ERROR_MATRIX) == sorted(reference)
    assert sorted(typing.get_args(ErrorCode)) == sorted(reference)
    assert len(reference) == 16


def test_AS_ERR_001_each_row_matches_the_reference(reference: dict[str, dict[str, object]]) -> None:
    for code, row in reference.items():
        spec = ERROR_MATRIX[code]  # type: ignore[index]
        assert list(spec.phases) == row["phases"], code
        assert list(spec.retry) == row["retry"], code
        assert spec.cacheable is row["cacheable"], code
        assert list(spec.reference_details) == row["details"], code


def test_AS_ERR_001_rows_are_well_formed() -> None:
    assert set(typing.get_args(Retry)) == RETRY_VALUES
    for code, spec in ERROR_MATRIX.items():
        assert spec.phases and all(1 <= p <= 10 for p in spec.phases), code
        assert spec.retry and set(spec.retry) <= RETRY_VALUES, code


def test_AS_ERR_001_expected_retry_protocol_steps_are_never_cacheable() -> None:
    assert ERROR_MATRIX["CONFIRMATION_REQUIRED"].cacheable is False
    assert ERROR_MATRIX["RATE_LIMITED"].cacheable is False
    assert ERROR_MATRIX["INVOCATION_CONFLICT"].cacheable is False
    assert [c for c, s in ERROR_MATRIX.items() if not s.cacheable] == [
        "INVOCATION_CONFLICT",
        "CONFIRMATION_REQUIRED",
        "RATE_LIMITED",
    ]


def test_AS_ERR_001_capability_error_enforces_the_matrix() -> None:
    with pytest.raises(ValueError, match="unknown error code"):
        ErrorPayload("NOPE", "x", "no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not allowed"):
        ErrorPayload("TIMEOUT", "x", "after-refresh")
    # error() defaults retry to the first allowed category and drops None details.
    made = error("EXECUTION_FAILED", "failed", reason="handler-error", transient=None)
    assert made.retry == "no"
    assert made.details == {"reason": "handler-error"}
    assert made.cacheable is True
    assert error("RATE_LIMITED", "slow down").cacheable is False
    # Messages are capped at 300 characters.
    assert len(error("CANCELLED", "x" * 1000).message) == 300


def test_AS_ERR_001_wire_form_keeps_code_retry_details() -> None:
    made = error("CONFIRMATION_INVALID", "expired", "with-confirmation", reason="expired")
    assert made.to_json() == {
        "code": "CONFIRMATION_INVALID",
        "message": "expired",
        "retry": "with-confirmation",
        "details": {"reason": "expired"},
    }
    assert "details" not in error("NOT_AUTHENTICATED", "sign in").to_json()


def test_AS_ERR_001_details_beyond_the_reference_are_few_and_deliberate() -> None:
    # TIMEOUT says whether its handler was stopped, CONFIRMATION_INVALID what the person said
    # when they denied; nothing else extends the reference rows.
    extended = {code: spec.extensions for code, spec in ERROR_MATRIX.items() if spec.extensions}
    assert extended == {"TIMEOUT": ("handler",), "CONFIRMATION_INVALID": ("personSaid",)}
    for spec in ERROR_MATRIX.values():
        assert set(spec.extensions) <= set(spec.details)
