"""The compiler: canonical, machine-independent contracts; dynamic declarations fail completeness."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentsurface import AgentSurfaceRegistry, AuthorityError
from agentsurface.compiler.config import load_config
from agentsurface.compiler.errors import CompileError
from agentsurface.compiler.load import authority_from_contract
from agentsurface.compiler.manifest import compile_project, contract_bytes
from tests.fixtures import copy_shop, edit


def compile_bytes(root: Path) -> bytes:
    return contract_bytes(compile_project(load_config(root)))


def problems(root: Path) -> list[tuple[str, str]]:
    with pytest.raises(CompileError) as caught:
        compile_project(load_config(root))
    return [(p.code, p.where) for p in caught.value.problems]


def test_two_checkouts_at_different_paths_give_identical_bytes(tmp_path: Path) -> None:
    first = compile_bytes(copy_shop(tmp_path / "a"))
    second = compile_bytes(copy_shop(tmp_path / "elsewhere" / "checkout-b"))
    assert first == second
    text = first.decode()
    assert str(tmp_path) not in text and "checkout-b" not in text
    assert compile_bytes(tmp_path / "a") == first  # and again in the same process


def test_contract_has_rows_hashes_versions_and_origins(tmp_path: Path) -> None:
    document = json.loads(compile_bytes(copy_shop(tmp_path / "app")))
    assert document["completeness"] == {"status": "complete", "declarations": 3, "capabilities": 5}
    assert document["compiler"]["name"] == "agentsurface-python"
    assert document["targets"] == ["shop.surface"]
    assert [c["id"] for c in document["contracts"]] == [
        "domain:shop.checkout",
        "domain:shop.search",
        "shop.cart",
    ]
    cart = document["contracts"][2]
    assert cart["origin"] == {"module": "shop.surface", "name": "Cart", "file": "shop/surface.py"}
    rows = {r["id"]: r for r in document["capabilities"]}
    assert set(rows) == {
        "domain:shop.checkout",
        "domain:shop.search",
        "view:shop.cart.addItem",
        "view:shop.cart.contents",
        "view:shop.cart.empty",
    }
    assert rows["domain:shop.checkout"]["reach"] == "high"
    assert rows["domain:shop.checkout"]["policies"] == ["signed-in"]
    assert rows["domain:shop.search"]["reach"] == "medium"
    assert rows["view:shop.cart.contents"] == {
        **rows["view:shop.cart.contents"],
        "effect": "read",
        "reach": "low",
    }
    assert rows["view:shop.cart.addItem"]["tags"] == ["cart"]
    for forbidden in ("registrationId", "timestamp", "handler"):
        assert forbidden not in json.dumps(document)


def test_the_compile_leaves_the_importing_process_as_it_was(tmp_path: Path) -> None:
    before_path, before_modules = list(sys.path), set(sys.modules)
    compile_bytes(copy_shop(tmp_path / "app"))
    assert sys.path == before_path
    assert not any(name == "shop" or name.startswith("shop.") for name in set(sys.modules) - before_modules)


def test_the_committed_contract_is_the_page_authority(tmp_path: Path) -> None:
    authority = authority_from_contract(compile_bytes(copy_shop(tmp_path / "app")))
    assert authority.ids() == ["domain:shop.checkout", "domain:shop.search", "shop.cart"]
    assert authority.manifest["capabilities"][0]["id"] == "domain:shop.checkout"


def test_a_contract_missing_from_the_file_or_changed_is_refused_at_registration(tmp_path: Path) -> None:
    from agentsurface import AgentComponent, observation

    root = copy_shop(tmp_path / "app")
    registry = AgentSurfaceRegistry(authority=authority_from_contract(compile_bytes(root)))

    class Coupons(AgentComponent, type="shop.coupons", description="Not reviewed."):
        @observation("Codes.")
        def codes(self) -> list[str]:
            return []

    with pytest.raises(AuthorityError, match=r"shop\.coupons.*not in the capability manifest"):
        registry.register(Coupons())

    class Cart(AgentComponent, type="shop.cart", description="The shopping cart, changed.", tags=["cart"]):
        @observation("The SKUs in the cart.")
        def contents(self) -> list[str]:
            return []

    with pytest.raises(AuthorityError, match="stale or semantically changed"):
        registry.register(Cart())


def test_an_edited_contract_file_is_refused(tmp_path: Path) -> None:
    data = json.loads(compile_bytes(copy_shop(tmp_path / "app")))
    data["capabilities"][0]["confirmation"] = "never"
    with pytest.raises(AuthorityError, match="manifest hash"):
        authority_from_contract(json.dumps(data))
    data = json.loads(compile_bytes(tmp_path / "app"))
    data["contracts"][0]["contract"]["confirmation"] = "never"
    with pytest.raises(AuthorityError, match="contract hash"):
        authority_from_contract(json.dumps(data))
    with pytest.raises(AuthorityError, match="not written by the compiler"):
        authority_from_contract(json.dumps({k: v for k, v in data.items() if k != "compiler"}))
    with pytest.raises(AuthorityError, match="not JSON"):
        authority_from_contract("{")


DYNAMIC_CASES = {
    "class in a function": (
        "\ndef make():\n"
        "    class Late(AgentComponent, type='shop.late', description='d'):\n"
        "        @observation('o')\n"
        "        def value(self) -> int:\n"
        "            return 1\n"
        "    return Late\n\n"
        "LATE = make()\n",
        ("dynamic-declaration", "shop.surface:make.<locals>.Late"),
    ),
    "class made by type()": (
        "\ndef _value(self) -> int:\n    return 1\n\n"
        "Made = type('Made', (AgentComponent,), {'value': observation('o')(_value)},"
        " type='shop.made', description='d')\n",
        ("dynamic-declaration", "shop.surface:Made"),
    ),
    "procedure from a factory": (
        "\ndef procedure(name: str) -> ProcedureContract:\n"
        "    return ProcedureContract(id=f'domain:shop.{name}', description='d', effect='server-query')\n\n"
        "REFUND = procedure('refund')\n",
        ("dynamic-declaration", "domain:shop.refund"),
    ),
    "procedures in a comprehension": (
        "\nMANY = [ProcedureContract(id=f'domain:shop.p{i}', description='d', effect='server-query')"
        " for i in range(2)]\n",
        ("dynamic-declaration", "domain:shop.p0"),
    ),
    "a module that does not import": (
        "\nraise RuntimeError('needs the browser')\n",
        ("import-failed", "shop.surface"),
    ),
    "two declarations of one id": (
        "\nSEARCH_AGAIN = ProcedureContract(id='domain:shop.search', description='d', effect='server-query')\n",
        ("duplicate-declaration", "domain:shop.search"),
    ),
}


@pytest.mark.parametrize("case", sorted(DYNAMIC_CASES))
def test_dynamic_or_unsupported_declarations_fail_completeness(tmp_path: Path, case: str) -> None:
    root = copy_shop(tmp_path / "app")
    appended, expected = DYNAMIC_CASES[case]
    with (root / "shop" / "surface.py").open("a") as source:
        source.write(appended)
    assert expected in problems(root)


def test_a_contract_from_outside_the_apps_packages_is_external(tmp_path: Path) -> None:
    root = copy_shop(tmp_path / "app")
    (root / "vendor_pkg.py").write_text(
        "from agentsurface import AgentComponent, observation\n\n"
        "class Widget(AgentComponent, type='vendor.widget', description='d'):\n"
        "    @observation('o')\n"
        "    def value(self) -> int:\n"
        "        return 1\n"
    )
    edit(
        root / "shop" / "surface.py",
        "from pydantic import Field\n",
        "from pydantic import Field\nimport vendor_pkg\n",
    )
    assert ("external-declaration", "vendor_pkg:Widget") in problems(root)


def test_a_package_target_compiles_its_submodules(tmp_path: Path) -> None:
    root = copy_shop(tmp_path / "app")
    (root / "shop" / "page.py").unlink()  # page code imports the browser: not a compile target
    edit(root / "pyproject.toml", 'modules = ["shop.surface"]', 'modules = ["shop"]')
    document = json.loads(compile_bytes(root))
    assert document["targets"] == ["shop"]
    assert len(document["contracts"]) == 3


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("modules = []", "at least one module"),
        ('modules = ["shop surface"]', "is not a module name"),
        ('modules = ["shop.surface"]\ncontract = "/abs/contract.json"', "relative POSIX path"),
        ('modules = ["shop.surface"]\nsurprise = 1', "unknown keys"),
    ],
)
def test_bad_configuration_is_a_clear_error(tmp_path: Path, table: str, message: str) -> None:
    root = copy_shop(tmp_path / "app")
    (root / "pyproject.toml").write_text(f"[tool.agentsurface]\n{table}\n")
    with pytest.raises(CompileError, match=message):
        load_config(root)
