"""Assertions that tell hidden from disabled, plus normalized semantic snapshots.

``assert_exposes`` means present *and available* for the harness consumer;
``assert_exposes_unavailable`` present with ``available: false``; ``assert_hidden`` absent
altogether, which is what an unauthorized consumer must see.
"""

from __future__ import annotations

import json
from typing import Any

from .._core.jsonvalue import thaw
from .._core.pipeline.invocation import InvocationResult
from .harness import TestSurface


def _find(surface: TestSurface, capability_id: str, instance_id: str | None) -> list[Any]:
    snap = surface.snapshot()
    found: list[Any] = []
    for component in snap.components:
        if instance_id not in (None, component.instance_id):
            continue
        found.extend(
            c for c in component.capabilities if c.capability_id == capability_id
        )
    found.extend(
        p for p in snap.procedures if p.procedure_id == capability_id and instance_id in (None, p.context[1])
    )
    return found


def assert_exposes(surface: TestSurface, capability_id: str, *, instance_id: str | None = None) -> None:
    found = _find(surface, capability_id, instance_id)
    if not found:
        raise AssertionError(f"{capability_id} is not on the surface (hidden or not mounted)")
    if not any(d.available for d in found):
        reasons = sorted({d.unavailable_reason or "?" for d in found})
        raise AssertionError(f"{capability_id} is on the surface but unavailable: {', '.join(reasons)}")


def assert_exposes_unavailable(
    surface: TestSurface, capability_id: str, *, reason: str | None = None, instance_id: str | None = None
) -> None:
    found = _find(surface, capability_id, instance_id)
    if not found:
        raise AssertionError(f"{capability_id} is hidden, not disabled")
    disabled = [d for d in found if not d.available]
    if not disabled:
        raise AssertionError(f"{capability_id} is available")
    if reason is not None and not any(d.unavailable_reason == reason for d in disabled):
        raise AssertionError(
            f"{capability_id} is unavailable for {disabled[0].unavailable_reason!r}, not {reason!r}"
        )


def assert_hidden(surface: TestSurface, capability_id: str, *, instance_id: str | None = None) -> None:
    found = _find(surface, capability_id, instance_id)
    if found:
        state = "available" if any(d.available for d in found) else "disabled (visible)"
        raise AssertionError(f"{capability_id} is {state}, not hidden")


def assert_ok(result: InvocationResult) -> Any:
    if not result.ok:
        error = result.error
        raise AssertionError(
            f"expected ok, got {error.code if error else '?'}: {error.message if error else ''}"
        )
    return result.output


def assert_fails_with(result: InvocationResult, code: str, **details: Any) -> None:
    """The result is an error with ``code`` and (a superset of) ``details``."""
    if result.ok or result.error is None:
        raise AssertionError(f"expected {code}, got ok")
    if result.error.code != code:
        raise AssertionError(f"expected {code}, got {result.error.code}: {result.error.message}")
    actual = dict(result.error.details or {})
    for key, value in details.items():
        if key not in actual:
            raise AssertionError(f"{code} has no details.{key} (details: {actual})")
        if thaw(actual[key]) != value:
            raise AssertionError(f"{code} details.{key} is {actual[key]!r}, expected {value!r}")


def semantic_snapshot(surface: TestSurface, *, include_version: bool = False) -> dict[str, Any]:
    """The snapshot with volatility removed: registration ids become ``<reg#n>`` in order of
    first appearance; surface id and capture time dropped; version dropped unless asked for."""
    data = thaw(surface.snapshot().to_json())
    data.pop("surfaceId", None)
    data.pop("capturedAt", None)
    if not include_version:
        data.pop("surfaceVersion", None)
    placeholders: dict[str, str] = {}

    def normalize(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: (_placeholder(placeholders, v) if k in ("registrationId",) else normalize(v))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [normalize(v) for v in value]
        return value

    result: dict[str, Any] = normalize(data)
    return result


def _placeholder(table: dict[str, str], value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if value not in table:
        table[value] = f"<reg#{len(table) + 1}>"
    return table[value]


def render_semantic_snapshot(surface: TestSurface, *, include_version: bool = False) -> str:
    """Stable, reviewable text (sorted keys, two-space indent) for committing next to tests."""
    return (
        json.dumps(semantic_snapshot(surface, include_version=include_version), indent=2, sort_keys=True)
        + "\n"
    )
