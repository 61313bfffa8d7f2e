"""The page's procedure contracts from the reviewed contract.json, held side by side with the
declaring module's pydantic contracts: the same contract (hash), and for every input and output
the same answer (the same JSON, pydantic's issues), pydantic imported only for what the compiled
check cannot prove valid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from demo.shared import contracts as declared
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsurface._core.errors import AuthorityError
from agentsurface._core.schemas.committed import CommittedSchema
from agentsurface._core.schemas.schema import Valid
from agentsurface.compiler.load import procedures_from_contract

ROOT = Path(__file__).resolve().parents[3]
CONTRACT = ROOT / "demo" / "page" / "contract.json"
DECLARED = {c.id: c for c in declared.PROCEDURES}

TEXT = st.sampled_from(
    ["", "a", "Milan", "dev-0001", "dev-12345678", "dev-0001\n", "dev-1", " ", "x" * 81, "\u202e", "ok\r", "\ud800"]
)
SCALAR = st.none() | st.booleans() | st.integers(-3, 300) | st.floats(-1, 300, allow_nan=False) | TEXT
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(
        st.sampled_from(["status", "city", "text", "limit", "deviceId", "deviceIds", "name", "reason", "x"]),
        inner,
        max_size=4,
    ),
    max_leaves=8,
)
STATUS = st.sampled_from(["online", "offline", "disabled", "gone"])
ROW = st.fixed_dictionaries(
    {
        "id": TEXT,
        "name": TEXT,
        "model": TEXT,
        "city": TEXT,
        "status": STATUS,
        "lastSeen": TEXT,
        "disabledReason": st.none() | TEXT,
        "updatedAt": TEXT,
    }
)
OUTPUT = st.fixed_dictionaries(
    {"devices": st.lists(ROW, max_size=2), "total": st.integers(0, 3)}
) | st.fixed_dictionaries({"device": ROW}) | JSON


def _same(ours: Any, theirs: Any) -> None:
    assert type(ours) is type(theirs)
    if isinstance(theirs, Valid):
        assert ours.json == theirs.json
    else:
        assert ours == theirs


@pytest.fixture(scope="module")
def page_procedures() -> dict[str, Any]:
    return procedures_from_contract(CONTRACT.read_bytes())


def test_each_procedure_is_the_reviewed_contract(page_procedures: dict[str, Any]) -> None:
    assert set(page_procedures) == set(DECLARED)
    for procedure_id, contract in page_procedures.items():
        assert contract.hash == DECLARED[procedure_id].hash
        assert contract.to_json() == DECLARED[procedure_id].to_json()
        assert isinstance(contract.input, CommittedSchema)


@pytest.mark.parametrize("procedure_id", sorted(DECLARED))
@settings(max_examples=150, deadline=None)
@given(value=JSON)
def test_an_input_gets_the_declared_contracts_answer(
    page_procedures: dict[str, Any], procedure_id: str, value: Any
) -> None:
    _same(page_procedures[procedure_id].input.validate(value), DECLARED[procedure_id].input.validate(value))


@pytest.mark.parametrize("procedure_id", sorted(DECLARED))
@settings(max_examples=60, deadline=None)
@given(value=OUTPUT)
def test_an_output_gets_the_declared_contracts_answer(
    page_procedures: dict[str, Any], procedure_id: str, value: Any
) -> None:
    ours, theirs = page_procedures[procedure_id].output, DECLARED[procedure_id].output
    _same(ours.validate_output(value), theirs.validate_output(value))


def test_a_valid_value_is_proven_and_completed_without_the_declared_contract() -> None:
    procedures = procedures_from_contract(CONTRACT.read_bytes())
    query = procedures["domain:devices.query"].input
    valid = query.validate({"city": "Milan"})
    assert isinstance(valid, Valid)
    assert valid.json == {"city": "Milan", "limit": 50, "status": None, "text": None}  # pydantic's defaults
    assert "declared" not in vars(query)  # proven: the declaring module was never asked
    assert query.validate({"limit": 0}) == DECLARED["domain:devices.query"].input.validate({"limit": 0})
    assert "declared" in vars(query)


def test_the_page_side_needs_no_pydantic_for_valid_values() -> None:
    script = f"""
import sys
from agentsurface.compiler.load import procedures_from_contract
procedures = procedures_from_contract(open({str(CONTRACT)!r}, "rb").read())
rename = procedures["domain:devices.rename"].input.validate({{"deviceId": "dev-0001", "name": "Roof"}})
disable = procedures["domain:devices.disable"].input.validate({{"deviceIds": ["dev-0001"]}})
assert rename.json == {{"deviceId": "dev-0001", "name": "Roof"}}, rename
assert disable.json == {{"deviceIds": ["dev-0001"], "reason": None}}, disable
print(sorted(m for m in ("pydantic", "jsonschema", "demo.shared.contracts") if m in sys.modules))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    assert out.strip() == "[]"


def test_an_edited_entry_or_a_stale_declaration_is_refused() -> None:
    document = json.loads(CONTRACT.read_bytes())
    entry = next(e for e in document["contracts"] if e["id"] == "domain:devices.query")
    entry["contract"]["inputSchema"]["properties"]["limit"]["maximum"] = 10_000
    with pytest.raises(AuthorityError, match="reviewed hash"):
        procedures_from_contract(document)

    document = json.loads(CONTRACT.read_bytes())
    entry = next(e for e in document["contracts"] if e["id"] == "domain:devices.query")
    entry["hash"] = "sha256:" + "0" * 64
    entry["contract"]["description"] = entry["contract"]["description"]  # the body is intact
    with pytest.raises(AuthorityError, match="reviewed hash"):
        procedures_from_contract(document)


def test_the_fallback_refuses_a_declaration_that_differs_from_the_review() -> None:
    document = json.loads(CONTRACT.read_bytes())
    entry = next(e for e in document["contracts"] if e["id"] == "domain:devices.query")
    entry["origin"] = {**entry["origin"], "name": "RENAME"}  # points at another contract
    query = procedures_from_contract(document)["domain:devices.query"].input
    with pytest.raises(AuthorityError, match="differs from its reviewed entry"):
        query.validate({"limit": 0})
