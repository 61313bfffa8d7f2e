"""Toolset options: a declared topology or confirmation mode, and budget only in meta mode.

Requirements: AS-TOPO-001 (no ambiguous default), AS-TOPO-002 (topology sets the default,
an explicit mode overrides it). The behaviour behind each mode is in test_confirmation.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentsurface import Consumer
from agentsurface.lowlevel import Budget
from agentsurface.toolset import AgentToolset

from .helpers import CONSUMER, devices_surface


def make(**options: Any) -> AgentToolset:
    options.setdefault("consumer", CONSUMER)
    return AgentToolset(devices_surface().registry, **options)


@pytest.mark.parametrize("mode", ["direct", "meta"])
def test_AS_TOPO_001_neither_topology_nor_confirmations_is_refused(mode: str) -> None:
    with pytest.raises(ValueError, match="topology"):
        make(mode=mode)


def test_AS_TOPO_001_the_refusal_registers_nothing_on_the_registry() -> None:
    surface = devices_surface()
    version = surface.registry.version
    with pytest.raises(ValueError):
        AgentToolset(surface.registry, consumer=CONSUMER)
    assert surface.registry.version == version


@pytest.mark.parametrize(
    ("topology", "confirmations", "expected"),
    [
        ("embedded", None, "wait"),
        ("remote", None, "two-phase"),
        ("remote", "wait", "wait"),
        ("embedded", "two-phase", "two-phase"),
        (None, "wait", "wait"),
        (None, "two-phase", "two-phase"),
    ],
)
def test_AS_TOPO_002_topology_sets_the_default_and_an_explicit_mode_overrides_it(
    topology: str | None, confirmations: str | None, expected: str
) -> None:
    toolset = make(topology=topology, confirmations=confirmations)
    assert toolset.confirmation_mode == expected


@pytest.mark.parametrize(
    "options",
    [
        {"topology": "browser"},
        {"topology": "embedded", "confirmations": "auto"},
        {"topology": "embedded", "mode": "hybrid"},
    ],
)
def test_AS_TOPO_002_unknown_option_values_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        make(**options)


def test_a_budget_is_refused_in_direct_mode() -> None:
    # A direct catalog has no marker the model could see: silently dropped tools are refused.
    with pytest.raises(ValueError, match="meta"):
        make(topology="embedded", budget=Budget(max_components=1))
    with pytest.raises(ValueError, match="meta"):
        make(topology="embedded", mode="direct", budget=Budget(max_bytes=10_000))


def test_a_budget_is_accepted_in_meta_mode() -> None:
    toolset = make(topology="embedded", mode="meta", budget=Budget(max_components=1))
    assert [t.name for t in toolset.tools()] == ["surface_discover", "surface_read", "surface_act"]


def test_mode_defaults_to_direct() -> None:
    toolset = make(topology="embedded")
    assert toolset.mode == "direct"
    assert "domain_devices__disable" in [t.name for t in toolset.tools()]


def test_the_consumer_must_be_a_consumer_identity() -> None:
    surface = devices_surface()
    with pytest.raises(TypeError):
        AgentToolset(surface.registry, consumer={"id": "copilot"}, topology="embedded")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        AgentToolset(object(), consumer=Consumer("copilot"), topology="embedded")  # type: ignore[arg-type]
