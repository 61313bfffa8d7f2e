"""explain_surface: the developer projection of why the snapshot looks as it does.

AS-EXPLAIN-001..004, and AS-CACHE-004 (procedure descriptions never carry contextual text).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import agentsurface
from agentsurface import (
    Consumer,
    Decision,
    Policy,
    PolicyContext,
    audit,
    authenticated,
    require_confirmation,
)
from agentsurface.explain import explain_surface

from .helpers import (
    DevicesState,
    bind_table,
    bind_toolbar,
    devices_table,
    disable_procedure,
    make_registry,
    toolbar,
)

SELECT = "view:devices.table.selectRows"
PACKAGE = Path(agentsurface.__file__).resolve().parent


class Vote(Policy):
    def __init__(self, name: str, vote: Any) -> None:
        self.name = name
        self.vote = vote

    def on_discovery(self, ctx: PolicyContext) -> Any:
        if isinstance(self.vote, Exception):
            raise self.vote
        return self.vote


def table(registry_policies: list[Policy] = (), host: dict[str, Any] | None = None, **bind: Any) -> Any:  # type: ignore[assignment]
    contract = devices_table()
    registry = make_registry([contract], policies=list(registry_policies), context=lambda: host or {})
    registry.register(bind_table(contract, DevicesState(), **bind))
    return registry


def explained(registry: Any, cid: str = SELECT, **options: Any) -> Any:
    (found,) = [c for c in explain_surface(registry, **options) if c.capability_id == cid]
    return found


# --------------------------------------------------------------------------- AS-EXPLAIN-001


def test_AS_EXPLAIN_001_reports_a_hidden_capability_and_the_policy_that_hid_it() -> None:
    registry = table([authenticated()], host={"user": None})
    assert registry.snapshot().components == ()
    everything = explain_surface(registry)
    assert {c.capability_id for c in everything} == {
        "view:devices.table.visibleRows",
        SELECT,
        "view:devices.table.clear",
    }
    select = explained(registry)
    assert select.outcome == "hide"
    assert select.description == "Select rows by device id"
    assert select.kind == "action" and select.plane == "view"
    assert select.component == ("devices.table", "default")
    (vote,) = select.policies
    assert vote.name == "authenticated" and vote.discovery == Decision("hide")


def test_AS_EXPLAIN_001_a_throwing_discovery_policy_is_recorded() -> None:
    registry = table([Vote("exploding", RuntimeError("boom"))])
    assert registry.snapshot().components == ()
    (vote,) = explained(registry).policies
    assert vote.threw is True
    assert vote.discovery is not None and vote.discovery.outcome == "hide"
    assert explained(registry).outcome == "hide"


def test_AS_EXPLAIN_001_state_unavailability_is_not_attributed_to_a_policy() -> None:
    registry = table(select_options={"when": lambda: False, "unavailable_reason": "Nothing is loaded"})
    select = explained(registry)
    assert select.outcome == "disable"  # what the snapshot did
    assert (select.available, select.unavailable_reason) == (False, "Nothing is loaded")
    assert select.reason == "Nothing is loaded"
    assert select.policies == ()


# --------------------------------------------------------------------------- AS-EXPLAIN-002


def test_AS_EXPLAIN_002_every_policy_is_attributed_by_name_and_scope_in_chain_order() -> None:
    registry = table(
        [Vote("from-registry", None)],
        policies=[Vote("from-component", None)],
        select_options={"policies": [Vote("from-capability", None)]},
    )
    assert [(p.name, p.scope) for p in explained(registry).policies] == [
        ("from-registry", "registry"),
        ("from-component", "component"),
        ("from-capability", "capability"),
    ]
    assert [(p.name, p.scope) for p in explained(registry, "view:devices.table.clear").policies] == [
        ("from-registry", "registry"),
        ("from-component", "component"),
    ]


def test_AS_EXPLAIN_002_phases_and_confirmation_escalation_are_reported() -> None:
    registry = table([authenticated(), require_confirmation(), audit()], host={"user": {"id": "u"}})
    votes = {p.name: p for p in explained(registry).policies}
    assert votes["authenticated"].phases == ("discovery", "authorize")
    assert votes["require_confirmation"].phases == ()
    assert votes["require_confirmation"].confirmation_escalation is True
    assert votes["authenticated"].confirmation_escalation is False
    assert votes["audit"].phases == ("invoke",)


def test_AS_EXPLAIN_002_keeps_both_disable_votes_and_the_first_reason() -> None:
    registry = table(
        [Vote("first", Decision("disable", "first reason")), Vote("second", Decision("disable", "second"))]
    )
    select = explained(registry)
    assert (select.outcome, select.reason) == ("disable", "first reason")
    assert [p.discovery.outcome for p in select.policies if p.discovery] == ["disable", "disable"]


# --------------------------------------------------------------------------- AS-EXPLAIN-003


VOTES = st.sampled_from(
    [
        None,
        "expose",
        "hide",
        Decision("disable", "busy"),
        Decision("disable", "later"),
        "disable",
        RuntimeError("x"),
    ]
)


@given(
    registry_votes=st.lists(VOTES, max_size=3),
    capability_votes=st.lists(VOTES, max_size=2),
    when_ok=st.booleans(),
    enabled=st.booleans(),
)
def test_AS_EXPLAIN_003_composed_outcome_always_agrees_with_the_snapshot(
    registry_votes: list[Any], capability_votes: list[Any], when_ok: bool, enabled: bool
) -> None:
    registry = table(
        [Vote(f"r{i}", v) for i, v in enumerate(registry_votes)],
        enabled=enabled,
        select_options={
            "policies": [Vote(f"c{i}", v) for i, v in enumerate(capability_votes)],
            "when": lambda: when_ok,
            "unavailable_reason": "no rows",
        },
    )
    shown = {c.capability_id: c for c in registry.snapshot(include_unavailable=True).capabilities()}
    explanations = explain_surface(registry)
    for item in explanations:
        descriptor = shown.get(item.capability_id)
        if item.outcome == "hide":
            assert descriptor is None, item
            continue
        assert descriptor is not None, item
        assert descriptor.available is (item.outcome == "expose"), item
        assert descriptor.unavailable_reason == item.reason, item
    assert set(shown) <= {c.capability_id for c in explanations}


def test_AS_EXPLAIN_003_scope_and_consumer_line_up_with_the_snapshot() -> None:
    web_hidden = Vote("no-webmcp", None)
    web_hidden.on_discovery = lambda ctx: "hide" if ctx.consumer.kind == "webmcp" else None  # type: ignore[method-assign]
    contract = devices_table()
    tb = toolbar()
    proc = disable_procedure()
    registry = make_registry([contract, tb, proc], policies=[web_hidden])
    state = DevicesState()
    registry.register(bind_table(contract, state))
    registry.register(bind_toolbar(tb, state, proc))
    scoped = explain_surface(registry, scope=["devices.toolbar"])
    assert {c.component[0] for c in scoped} == {"devices.toolbar"}
    assert {c.capability_id for c in scoped} == {"view:devices.toolbar.mode", "domain:devices.disable"}
    web = Consumer("browser", "webmcp")
    assert {c.outcome for c in explain_surface(registry, consumer=web)} == {"hide"}
    assert registry.snapshot(consumer=web).components == ()
    assert {c.outcome for c in explain_surface(registry)} == {"expose"}


def test_AS_EXPLAIN_003_refuses_foreign_or_closed_registries() -> None:
    with pytest.raises(TypeError):
        explain_surface(object())  # type: ignore[arg-type]
    registry = table()
    registry.close()
    with pytest.raises(agentsurface.RegistryClosedError, match="closed"):
        explain_surface(registry)


# --------------------------------------------------------------------------- AS-EXPLAIN-004


def test_AS_EXPLAIN_004_not_reachable_from_the_package_root() -> None:
    assert not hasattr(agentsurface, "explain_surface")
    assert "explain_surface" not in agentsurface.__all__
    assert [name for name in agentsurface.__all__ if "explain" in name.lower()] == []


def test_AS_EXPLAIN_004_nothing_agent_facing_imports_it() -> None:
    """Import every module except explain itself (and browser code needing ``js``) in a
    fresh interpreter: agentsurface.explain must never be loaded as a side effect."""
    script = """
import importlib, json, pkgutil, sys
import agentsurface
loaded, skipped = [], []
for info in pkgutil.walk_packages(agentsurface.__path__, "agentsurface."):
    if info.name == "agentsurface.explain":
        continue
    try:
        importlib.import_module(info.name)
        loaded.append(info.name)
    except ImportError as exc:
        if exc.name in ("js", "pyodide", "pyodide_js") or (exc.name or "").startswith(("js.", "pyodide.")):
            skipped.append(info.name)
        else:
            raise
print(json.dumps({
    "explain_loaded": "agentsurface.explain" in sys.modules,
    "root_names": [n for n in dir(agentsurface) if "explain" in n.lower()],
    "loaded": loaded,
}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["explain_loaded"] is False
    assert report["root_names"] == []
    assert "agentsurface.toolset" in report["loaded"]
    assert "agentsurface._core.registry.registry" in report["loaded"]


def test_AS_EXPLAIN_004_no_module_imports_explain_statically() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "explain.py" and path.parent == PACKAGE:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any("explain" in n.split(".")[-1] or n.endswith(".explain") for n in names):
                offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


# --------------------------------------------------------------------------- AS-CACHE-004


def procedure_registry(describe: Any = None) -> Any:
    tb, proc = toolbar(), disable_procedure()
    registry = make_registry([tb, proc])
    state = DevicesState()
    options = {"describe": describe} if describe is not None else {}
    registry.register(bind_toolbar(tb, state, proc, reference_options=options))
    return registry


def test_AS_CACHE_004_description_is_the_manifest_text_and_the_note_is_separate() -> None:
    registry = procedure_registry(lambda: "Currently bound to 2 selected device(s). " * 20)
    (proc,) = registry.snapshot().procedures
    assert proc.description == "Disable the given devices"
    assert proc.contextual_note is not None and proc.contextual_note.startswith("Currently bound")
    wire = proc.to_json()
    assert wire["description"] == "Disable the given devices"
    assert "Currently" not in wire["description"]
    assert wire["contextualNote"] == proc.contextual_note


def test_AS_CACHE_004_the_description_holds_still_while_the_note_changes() -> None:
    calls = {"n": 0}

    def note() -> str:
        calls["n"] += 1
        return f"note #{calls['n']}"

    registry = procedure_registry(note)
    first, second = registry.snapshot().procedures[0], registry.snapshot().procedures[0]
    assert first.description == second.description == "Disable the given devices"
    assert (first.contextual_note, second.contextual_note) == ("note #1", "note #2")


@pytest.mark.parametrize("describe", [None, lambda: "", lambda: 1 / 0])
def test_AS_CACHE_004_no_or_failing_describe_means_no_note(describe: Any) -> None:
    (proc,) = procedure_registry(describe).snapshot().procedures
    assert proc.description == "Disable the given devices"
    assert proc.contextual_note is None
    assert "contextualNote" not in proc.to_json()
