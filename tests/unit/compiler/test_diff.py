"""Each class of contract change, made in the fixture app's source, is classified as specified."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsurface.compiler.config import load_config
from agentsurface.compiler.diff import diff_contracts
from agentsurface.compiler.manifest import compile_project
from tests.fixtures import copy_shop, edit

SURFACE = "shop/surface.py"
NEW_ACTION = """
    @action("Remove an item from the cart.")
    def remove_item(self, sku: str) -> None:
        self.items.remove(sku)
"""
NEW_PROCEDURE = """
TRACK = ProcedureContract(id="domain:shop.track", description="Track an order.", effect="server-query")
"""

# case: (file, old, new, expected (subject, change, class))
CASES: dict[str, tuple[str, str, str, tuple[str, str, str]]] = {
    "new capability": (
        SURFACE,
        '    @action("Empty the cart."',
        NEW_ACTION + '\n    @action("Empty the cart."',
        ("view:shop.cart.removeItem", "capability-added", "widening"),
    ),
    "new declaration": (
        SURFACE,
        "SEARCH = ",
        NEW_PROCEDURE + "\nSEARCH = ",
        ("domain:shop.track", "declaration-added", "widening"),
    ),
    "removed policy": (
        SURFACE,
        'policies=["signed-in"],',
        "",
        ("domain:shop.checkout", "policy-removed", "widening"),
    ),
    "lower confirmation": (
        SURFACE,
        'confirmation="required",',
        'confirmation="optional",',
        ("domain:shop.checkout", "confirmation-lowered", "widening"),
    ),
    "less cautious effect": (
        SURFACE,
        'effect="destructive",\n    confirmation="required",',
        'effect="server-mutation",\n    confirmation="required",',
        ("domain:shop.checkout", "effect-lowered", "widening"),
    ),
    "removed capability": (
        SURFACE,
        '    @action("Empty the cart.", idempotent=True)\n    def empty(self) -> None:\n'
        "        self.items.clear()\n",
        "",
        ("view:shop.cart.empty", "capability-removed", "narrowing"),
    ),
    "removed declaration": (
        SURFACE,
        "SEARCH = ProcedureContract(",
        "_SEARCH = dict(",
        ("domain:shop.search", "declaration-removed", "narrowing"),
    ),
    "added policy": (
        SURFACE,
        'tags=["cart"])',
        'tags=["cart"], policies=["signed-in"])',
        ("shop.cart", "policy-added", "narrowing"),
    ),
    "higher confirmation": (
        SURFACE,
        'effect="server-query",\n    input',
        'effect="server-query",\n    confirmation="optional",\n    input',
        ("domain:shop.search", "confirmation-raised", "narrowing"),
    ),
    "more cautious effect": (
        SURFACE,
        'effect="server-query",\n    input',
        'effect="server-mutation",\n    input',
        ("domain:shop.search", "effect-raised", "narrowing"),
    ),
    "description": (
        SURFACE,
        "Search the catalogue.",
        "Search the whole catalogue.",
        ("domain:shop.search", "description-changed", "neutral"),
    ),
    "schema": (
        SURFACE,
        "max_length=32",
        "max_length=64",
        ("view:shop.cart.addItem", "schema-changed", "neutral"),
    ),
    "tags": (SURFACE, 'tags=["cart"]', 'tags=["cart", "checkout"]', ("shop.cart", "tags-changed", "neutral")),
}


def findings(tmp_path: Path, case: str) -> set[tuple[str, str, str]]:
    root = copy_shop(tmp_path / "app")
    before = compile_project(load_config(root))
    path, old, new, _ = CASES[case]
    edit(root / path, old, new)
    after = compile_project(load_config(root))
    return {(f.subject, f.change, f.cls) for f in diff_contracts(before, after)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_change_is_classified(tmp_path: Path, case: str) -> None:
    found = findings(tmp_path, case)
    assert CASES[case][3] in found
    # A change of one class never shows up as another class's finding on the same subject.
    subject, change, _ = CASES[case][3]
    assert {c for s, ch, c in found if s == subject and ch == change} == {CASES[case][3][2]}


def test_a_move_to_another_module_is_neutral(tmp_path: Path) -> None:
    root = copy_shop(tmp_path / "app")
    before = compile_project(load_config(root))
    source = (root / SURFACE).read_text()
    start = source.index("SEARCH = ProcedureContract(")
    (root / SURFACE).write_text(source[:start] + "from .catalogue import SEARCH  # noqa: E402\n")
    (root / "shop" / "catalogue.py").write_text(
        "from agentsurface import ProcedureContract\n\n" + source[start:]
    )
    after = compile_project(load_config(root))
    found = [(f.subject, f.change, f.cls, f.detail) for f in diff_contracts(before, after)]
    assert found == [
        ("domain:shop.search", "moved", "neutral", "shop.surface:SEARCH → shop.catalogue:SEARCH")
    ]


def test_no_change_no_findings_and_the_empty_base_widens_everything(tmp_path: Path) -> None:
    root = copy_shop(tmp_path / "app")
    document = compile_project(load_config(root))
    assert diff_contracts(document, document) == []
    added = diff_contracts(None, document)
    assert {f.cls for f in added} == {"widening"}
    assert len(added) == 3 + 3  # three declarations, the cart's three capabilities
