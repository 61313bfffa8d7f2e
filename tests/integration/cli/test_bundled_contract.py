"""The page trusts the committed contract in one line: ``agentsurface bundle`` puts the reviewed
contract.json into the app's wheel (integrity-checked by the runtime's lock), and
``authority_from_bundle()`` reads it from the loaded wheel's metadata. Here the wheel is unpacked
onto ``sys.path`` as Pyodide installs it; e2e/test_bundle.py runs the same page in Chromium."""

from __future__ import annotations

import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentsurface import AgentSurfaceRegistry, AuthorityError
from agentsurface.cli import main
from agentsurface.cli.bundle import _app_wheel
from agentsurface.cli.commands import compile_at
from agentsurface.compiler.load import authority_from_bundle
from tests.fixtures import copy_shop


@pytest.fixture
def installed_shop(tmp_path: Path) -> Iterator[tuple[Path, bytes]]:
    app = copy_shop(tmp_path / "app")
    assert main(["--root", str(app), "snapshot"]) == 0
    compiled = compile_at(app)
    name, wheel = _app_wheel(compiled.config, "0.1.0", compiled.data)
    site = tmp_path / "site-packages"
    (tmp_path / name).write_bytes(wheel)
    with zipfile.ZipFile(tmp_path / name) as archive:
        archive.extractall(site)
    sys.path.insert(0, str(site))
    try:
        yield site, (app / ".agentsurface" / "contract.json").read_bytes()
    finally:
        sys.path.remove(str(site))
        for module in [m for m in sys.modules if m == "shop" or m.startswith("shop.")]:
            del sys.modules[module]


def test_the_bundled_wheel_carries_the_reviewed_contract(installed_shop: tuple[Path, bytes]) -> None:
    site, committed = installed_shop
    (info,) = site.glob("shop_app-0.1.0.dist-info")
    assert (info / "agentsurface_contract.json").read_bytes() == committed
    assert "shop_app-0.1.0.dist-info/agentsurface_contract.json,sha256=" in (info / "RECORD").read_text()


def test_authority_from_bundle_trusts_it_in_one_line(installed_shop: tuple[Path, bytes]) -> None:
    from shop.surface import Cart

    registry = AgentSurfaceRegistry(authority=authority_from_bundle())
    registry.register(Cart())
    assert {c.capability_id for c in registry.snapshot().capabilities()} >= {"view:shop.cart.addItem"}
    assert authority_from_bundle("shop-app").manifest == registry.authority.manifest


def test_without_a_bundled_app_it_says_what_to_do() -> None:
    with pytest.raises(AuthorityError, match=r"no bundled contract.*data-packages=\"your-app\".*authority_from_contract"):
        authority_from_bundle()
