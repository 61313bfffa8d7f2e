"""Attribution and consent, in process (AS-EXTERNAL-001..004).

The "installed" distribution here is real to importlib.metadata: a package with a ``.dist-info``
(METADATA and RECORD) in a site directory inside the project, as a venv inside a checkout would
have it; the compiler puts it on sys.path through ``python-path``. The venv-built one is in
test_external_installed.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentsurface import AgentComponent, AgentSurfaceRegistry, AuthorityError, compile_manifest, observation
from agentsurface._core.contracts.authority import CapabilityAuthority
from agentsurface._core.contracts.external import (
    Contributor,
    ExternalContractError,
    consent_status,
    contributor_digest,
    normalize_distribution,
    read_contributors,
)
from agentsurface._core.jsonvalue import digest
from agentsurface.cli import main
from agentsurface.compiler.attribution import DistributionIndex
from agentsurface.compiler.config import load_config
from agentsurface.compiler.consent import Approval, approval_toml, check_listed_capabilities, parse_approvals
from agentsurface.compiler.diff import diff_contracts
from agentsurface.compiler.errors import CompileError
from agentsurface.compiler.load import authority_from_contract
from agentsurface.compiler.manifest import compile_project, contract_bytes
from tests.fixtures import copy_shop, edit, install_distribution

DIGEST = "sha256:" + "ab" * 32

# ------------------------------------------------------------------ a distribution on disk

VENDOR = """
from agentsurface import AgentComponent, ProcedureContract, observation


class Gauge(AgentComponent, type="gauges.gauge", description="A gauge."):
    @observation("The reading.")
    def reading(self) -> float:
        return 1.5


RESET = ProcedureContract(id="domain:gauges.reset", description="Reset all gauges.", effect="destructive",
                          confirmation="required")
"""


@pytest.fixture
def app(tmp_path: Path) -> Path:
    """The shop app, importing a gauge and a procedure from the installed Gauge.Kit 2.0."""
    root = copy_shop(tmp_path / "app")
    install_distribution(root / ".venv-site", "Gauge.Kit", "2.0", {"gauges/__init__.py": VENDOR})
    edit(
        root / "pyproject.toml",
        'files = ["index.html"]',
        'files = ["index.html"]\npython-path = [".", ".venv-site"]',
    )
    edit(
        root / "shop" / "surface.py",
        "from pydantic import Field\n",
        "from pydantic import Field\nfrom gauges import RESET, Gauge\n",
    )
    return root


def _approve(root: Path, value: str) -> None:
    with (root / "pyproject.toml").open("a") as f:
        f.write(f"\n[tool.agentsurface.external.gauge-kit]\n{value}\n")


def _document(root: Path) -> dict[str, Any]:
    return json.loads(contract_bytes(compile_project(load_config(root))))  # type: ignore[no-any-return]


def test_a_declaration_in_an_installed_distribution_is_attributed_not_refused(app: Path) -> None:
    document = _document(app)
    origins = {e["id"]: e["origin"] for e in document["contracts"]}
    assert origins["gauges.gauge"] == {
        "module": "gauges",
        "name": "Gauge",
        "file": "gauges/__init__.py",
        "distribution": "gauge-kit",
    }
    assert origins["domain:gauges.reset"]["distribution"] == "gauge-kit"
    assert "distribution" not in origins["shop.cart"]
    (external,) = document["external"]
    assert external == {
        "distribution": "gauge-kit",  # PEP 503 name of "Gauge.Kit"
        "version": "2.0",
        "declarations": ["domain:gauges.reset", "gauges.gauge"],
        "contractDigest": contributor_digest(
            e for e in document["contracts"] if e["id"] in external["declarations"]
        ),
        "authorization": None,
    }
    assert ".venv-site" not in json.dumps(document)  # the distribution's path, not the machine's


def test_a_module_no_distribution_ships_is_still_external_to_the_config(app: Path) -> None:
    (app / "loose.py").write_text(VENDOR.replace("gauges.", "loose."))
    edit(
        app / "shop" / "surface.py",
        "from gauges import RESET, Gauge\n",
        "from gauges import RESET, Gauge\nimport loose\n",
    )
    with pytest.raises(CompileError) as caught:
        compile_project(load_config(app))
    assert {(p.code, p.where) for p in caught.value.problems} == {
        ("external-declaration", "loose:Gauge"),
        ("external-declaration", "loose:RESET"),
    }


def test_a_distribution_is_held_to_the_static_rules_too(app: Path) -> None:
    site = app / ".venv-site" / "gauges" / "__init__.py"
    site.write_text(
        site.read_text()
        + "\ndef make():\n    class Hidden(AgentComponent, type='gauges.hidden', description='d'):\n        @observation('o')\n        def o(self) -> int:\n            return 1\n    return Hidden\n\nHIDDEN = make()\n"
    )
    with pytest.raises(CompileError) as caught:
        compile_project(load_config(app))
    assert ("dynamic-declaration", "gauges:make.<locals>.Hidden") in {
        (p.code, p.where) for p in caught.value.problems
    }


def test_consent_is_recorded_apart_from_integrity(app: Path) -> None:
    computed = _document(app)["external"][0]["contractDigest"]
    _approve(app, f'digest = "{computed}"')
    approved = _document(app)["external"][0]
    assert approved["contractDigest"] == computed and approved["authorization"] == {
        "expectedDigest": computed
    }
    edit(app / "pyproject.toml", computed, DIGEST)
    changed = _document(app)["external"][0]
    assert changed["contractDigest"] == computed and changed["authorization"] == {"expectedDigest": DIGEST}


def test_check_approve_and_inspect_in_process(app: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = ["--root", str(app)]
    assert main([*root, "snapshot"]) == 1
    err = capsys.readouterr().err
    assert "gauge-kit 2.0 contributes 2 capabilities that the app has not approved" in err
    assert main([*root, "check", "--format", "md"]) == 1
    out = capsys.readouterr().out
    assert "| CAPABILITY | KIND | EFFECT | REACH | CONFIRM | POLICIES | ORIGIN |" in out
    assert "| domain:gauges.reset | procedure | destructive | high | required | — | gauge-kit |" in out
    assert "| view:shop.cart.contents | observation | read | low | — | — | app |" in out
    assert "gauge-kit 2.0: 2 capabilities · NOT APPROVED" in out
    assert main([*root, "approve"]) == 0
    approval = capsys.readouterr().out
    assert approval.startswith(
        "# gauge-kit 2.0: 2 capabilities in 2 declarations\n[tool.agentsurface.external.gauge-kit]\n"
    )
    assert '"domain:gauges.reset",' in approval and "# destructive, confirmation required" in approval
    with (app / "pyproject.toml").open("a") as f:
        f.write("\n" + approval)
    assert main([*root, "snapshot"]) == 0
    assert main([*root, "check"]) == 0
    assert main([*root, "approve", "nobody-here"]) == 2
    assert (
        "nobody-here contributes no capabilities to this app (contributors: gauge-kit)"
        in capsys.readouterr().err
    )
    assert main([*root, "approve"]) == 0
    assert "every installed distribution that contributes capabilities is approved" in capsys.readouterr().out


def test_a_release_that_contributes_the_same_contracts_needs_no_new_approval(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ["--root", str(app)]
    _approve(app, f'digest = "{_document(app)["external"][0]["contractDigest"]}"')
    assert main([*root, "snapshot"]) == 0
    shutil.rmtree(app / ".venv-site")  # pip upgrades Gauge.Kit 2.0 → 2.0.1, same contracts
    install_distribution(app / ".venv-site", "Gauge.Kit", "2.0.1", {"gauges/__init__.py": VENDOR})
    capsys.readouterr()
    assert main([*root, "check", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["contributors"][0]["status"] == "approved"
    assert not [f for f in report["failures"] if f.startswith("external:")]  # only the record is stale
    assert {(f["subject"], f["change"]) for f in report["integrity"]["findings"]} == {
        ("gauge-kit", "external-version-changed")
    }
    assert main([*root, "snapshot"]) == 0
    assert main([*root, "check"]) == 0


def test_an_approval_listing_other_capabilities_exits_2(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    computed = _document(app)["external"][0]["contractDigest"]
    _approve(app, f'digest = "{computed}"\ncapabilities = ["domain:gauges.reset"]')
    assert main(["--root", str(app), "check"]) == 2
    assert "not listed: ['view:gauges.gauge.reading']" in capsys.readouterr().out


def test_an_app_of_its_own_has_no_contributors_and_a_leftover_approval_is_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_shop(tmp_path / "shop")
    document = _document(root)
    assert "external" not in document  # the field is there only when someone contributes
    _approve(root, f'digest = "{DIGEST}"')
    assert _document(root) == document  # an approval of nobody changes nothing
    assert main(["--root", str(root), "snapshot"]) == 0
    assert main(["--root", str(root), "check", "--plain", "--detail"]) == 0  # not a failure
    assert "gauge-kit: approved in pyproject.toml but contributes nothing now" in capsys.readouterr().out
    assert main(["--root", str(root), "approve"]) == 0
    assert "(none does)" in capsys.readouterr().out


def _editable(site: Path, source: Path) -> None:
    """An editable install of Gauge.Kit: its RECORD lists a .pth, its direct_url.json the tree."""
    install_distribution(site, "Gauge.Kit", "2.1.dev0", {"__editable__.gauge_kit.pth": f"{source}\n"})
    (dist_info,) = site.glob("*.dist-info")
    (dist_info / "direct_url.json").write_text(
        json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}})
    )
    (source / "gauges").mkdir(parents=True)
    (source / "gauges" / "__init__.py").write_text(VENDOR)


def test_an_editable_install_of_another_checkout_is_a_contributor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = copy_shop(tmp_path / "app")
    _editable(root / ".venv-site", tmp_path / "gauge-kit-checkout")
    monkeypatch.syspath_prepend(str(tmp_path / "gauge-kit-checkout"))  # what the .pth line does
    edit(
        root / "pyproject.toml",
        'files = ["index.html"]',
        'files = ["index.html"]\npython-path = [".", ".venv-site"]',
    )
    edit(
        root / "shop" / "surface.py",
        "from pydantic import Field\n",
        "from pydantic import Field\nfrom gauges import RESET, Gauge\n",
    )
    (external,) = _document(root)["external"]
    assert (external["distribution"], external["version"]) == ("gauge-kit", "2.1.dev0")


def test_an_editable_install_inside_the_project_is_the_projects_own_code(tmp_path: Path) -> None:
    root = copy_shop(tmp_path / "app")
    _editable(root / ".venv-site", root / "libs" / "gauge-kit")
    edit(
        root / "pyproject.toml",
        'files = ["index.html"]',
        'files = ["index.html"]\npython-path = [".", ".venv-site", "libs/gauge-kit"]',
    )
    edit(
        root / "shop" / "surface.py",
        "from pydantic import Field\n",
        "from pydantic import Field\nfrom gauges import RESET, Gauge\n",
    )
    with pytest.raises(CompileError) as caught:
        compile_project(load_config(root))
    assert {(p.code, p.where) for p in caught.value.problems} == {
        ("external-declaration", "gauges:Gauge"),
        ("external-declaration", "gauges:RESET"),
    }


# ------------------------------------------------------------------ attribution of real distributions


def test_modules_are_attributed_to_the_distributions_that_ship_them(tmp_path: Path) -> None:
    import pydantic.main

    import agentsurface._core.contracts.authority

    index = DistributionIndex()
    shipped = index.shipper("pydantic.main", pydantic.main.__file__)
    assert shipped is not None and shipped.name == "pydantic"
    from importlib.metadata import version

    assert shipped.version == version("pydantic")
    # This checkout is installed editable: its modules belong to agentsurface by direct_url.json.
    ours = index.shipper(
        "agentsurface._core.contracts.authority", agentsurface._core.contracts.authority.__file__
    )
    assert ours is not None and ours.name == "agentsurface"
    loose = tmp_path / "loose.py"
    loose.write_text("")
    assert index.shipper("loose", str(loose)) is None
    assert index.shipper("frozen", None) is None


# ------------------------------------------------------------------ approvals in pyproject.toml


def test_approvals_parse_keyed_by_normalized_name() -> None:
    approvals = parse_approvals(
        {"Acme_Widgets": {"digest": DIGEST, "capabilities": ["a"]}, "z.y": {"digest": DIGEST}}
    )
    assert approvals == {
        "acme-widgets": Approval("acme-widgets", DIGEST, ("a",)),
        "z-y": Approval("z-y", DIGEST, None),
    }
    assert parse_approvals(None) == {}


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"acme": "sha256:" + "ab" * 32}, "an approval is a table"),
        ({"acme": {"digest": "6f4b"}}, "digest must be"),
        ({"acme": {"digest": "sha256:" + "AB" * 32}}, "digest must be"),
        ({"acme": {}}, "digest must be"),
        ({"acme": {"digest": DIGEST, "allow": True}}, "unknown keys ['allow']"),
        ({"acme": {"digest": DIGEST, "capabilities": "x"}}, "capabilities must be a list"),
        ({"Acme": {"digest": DIGEST}, "acme": {"digest": DIGEST}}, "approved twice"),
        ({"-": {"digest": DIGEST}}, "not a distribution name"),
        (["acme"], "external must be a table"),
    ],
)
def test_a_malformed_approval_is_a_config_error(table: object, message: str) -> None:
    with pytest.raises(CompileError) as caught:
        parse_approvals(table)
    (problem,) = caught.value.problems
    assert problem.code == "invalid-config" and message in problem.message


def test_listed_capabilities_must_match() -> None:
    check_listed_capabilities(Approval("a", DIGEST, ("x", "y")), ["y", "x"])
    check_listed_capabilities(Approval("a", DIGEST, None), ["x"])
    with pytest.raises(CompileError, match=r"not listed: \['y'\], listed but not contributed: \['z'\]"):
        check_listed_capabilities(Approval("a", DIGEST, ("x", "z")), ["x", "y"])


def test_the_approval_text_is_valid_toml_that_parses_back() -> None:
    import tomllib

    contributor = Contributor("zope-widgets", "1", ("d",), DIGEST, None)
    text = approval_toml(contributor, ["view:d.b", "view:d.a"])
    parsed = tomllib.loads(text)["tool"]["agentsurface"]["external"]
    assert parse_approvals(parsed) == {
        "zope-widgets": Approval("zope-widgets", DIGEST, ("view:d.a", "view:d.b"))
    }


# ------------------------------------------------------------------ the record and the authority


class Dial(AgentComponent, type="dials.dial", description="A dial."):
    @observation("Its value.")
    def value(self) -> int:
        return 3


class Own(AgentComponent, type="own.thing", description="The app's own."):
    @observation("Its value.")
    def value(self) -> int:
        return 1


def _manifest(authorization: Any, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    manifest: dict[str, Any] = compile_manifest([Dial, Own])
    for entry in manifest["contracts"]:
        if entry["id"] == "dials.dial":
            entry["origin"] = {
                "module": "dials",
                "name": "Dial",
                "file": "dials/__init__.py",
                "distribution": "dials",
            }
    entries = [e for e in manifest["contracts"] if e["id"] == "dials.dial"]
    record = {
        "distribution": "dials",
        "version": "3.1",
        "declarations": ["dials.dial"],
        "contractDigest": contributor_digest(entries),
        "authorization": authorization,
        **(overrides or {}),
    }
    manifest["external"] = [record]
    manifest["compiler"] = {"name": "test", "version": "0"}
    manifest["hash"] = digest({k: v for k, v in manifest.items() if k != "hash"})
    return manifest


def _computed() -> str:
    return str(_manifest(None)["external"][0]["contractDigest"])


def test_the_authority_registers_an_approved_contributor() -> None:
    registry = AgentSurfaceRegistry(
        authority=authority_from_contract(_manifest({"expectedDigest": _computed()}))
    )
    registry.register(Dial())
    registry.register(Own())
    assert "view:dials.dial.value" in {d.capability_id for d in registry.snapshot().capabilities()}


@pytest.mark.parametrize(
    ("authorization", "status", "says"),
    [
        (None, "unapproved", "'dials' (3.1), which the app has not approved"),
        (
            {"expectedDigest": DIGEST},
            "changed",
            f"whose contract changed since the app approved it (approved {DIGEST}, now ",
        ),
    ],
)
def test_the_authority_refuses_an_unapproved_or_changed_contributor(
    authorization: Any, status: str, says: str
) -> None:
    registry = AgentSurfaceRegistry(authority=CapabilityAuthority.from_manifest(_manifest(authorization)))
    registry.register(Own())  # the app's own registrations are unaffected
    with pytest.raises(ExternalContractError) as caught:
        registry.register(Dial())
    assert caught.value.distribution == "dials" and caught.value.status == status
    assert isinstance(caught.value, AuthorityError) and caught.value.code == "AUTHORITY_VIOLATION"
    assert says in str(caught.value) and "'dials.dial'" in str(caught.value)
    with pytest.raises(ExternalContractError):  # every time, not only the first
        registry.register(Dial())


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"contractDigest": DIGEST}, "contractDigest of 'dials' does not match"),
        ({"declarations": ["dials.dial", "ghost"]}, "does not hold: ['ghost']"),
        ({"declarations": []}, "non-empty list"),
        ({"distribution": "Dials"}, "normalized distribution name"),
        ({"version": ""}, "version of 'dials'"),
        ({"authorization": {"expectedDigest": "yes"}}, "authorization of 'dials'"),
        ({"authorization": True}, "authorization of 'dials'"),
    ],
)
def test_a_forged_or_broken_record_refuses_the_whole_manifest(
    overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(AuthorityError, match="external") as caught:
        CapabilityAuthority.from_manifest(_manifest(None, overrides))
    assert message in str(caught.value)


def test_a_declaration_that_names_a_distribution_must_be_listed_under_it() -> None:
    manifest = _manifest(None)
    manifest["external"] = []
    manifest["hash"] = digest({k: v for k, v in manifest.items() if k != "hash"})
    with pytest.raises(AuthorityError, match="names distribution 'dials' but no external entry"):
        CapabilityAuthority.from_manifest(manifest)


def test_the_digest_covers_content_not_order_version_or_place() -> None:
    a, b = {"id": "x", "hash": "sha256:1"}, {"id": "y", "hash": "sha256:2"}
    assert contributor_digest([a, b]) == contributor_digest([b, a])
    assert contributor_digest([a, {**b, "origin": {"module": "moved"}}]) == contributor_digest([a, b])
    assert contributor_digest([a, {**b, "hash": "sha256:3"}]) != contributor_digest([a, b])
    assert consent_status("d", None) == "unapproved"
    assert consent_status("d", "d") == "approved"
    assert consent_status("d", "e") == "changed"
    assert normalize_distribution("Zope.Interface__x") == "zope-interface-x"
    document = _manifest(None)
    (record,) = read_contributors(document, {e["id"]: e for e in document["contracts"]})
    assert record.to_json() == document["external"][0]


def test_a_declaration_moving_into_a_dependency_is_widening() -> None:
    old = _manifest(None)
    new = _manifest(None)
    for entry in old["contracts"]:
        entry.get("origin", {}).pop("distribution", None)
    findings = [(f.subject, f.change, f.cls, f.detail) for f in diff_contracts(old, new)]
    assert ("dials.dial", "contributor-changed", "widening", "app → dials") in findings
    reverse = [(f.change, f.cls) for f in diff_contracts(new, old)]
    assert ("contributor-changed", "narrowing") in reverse


def test_consent_changes_are_drift_findings() -> None:
    unapproved, approved = _manifest(None), _manifest({"expectedDigest": _computed()})
    moved = _manifest({"expectedDigest": DIGEST}, {"version": "3.2"})
    assert [(f.subject, f.change, f.cls) for f in diff_contracts(unapproved, approved)] == [
        ("dials", "external-approved", "widening")
    ]
    assert {(f.change, f.cls) for f in diff_contracts(approved, moved)} == {
        ("external-approved", "widening"),
        ("external-version-changed", "neutral"),
    }
    assert [(f.change, f.cls) for f in diff_contracts(approved, unapproved)] == [
        ("external-approval-withdrawn", "narrowing")
    ]
    assert diff_contracts(approved, approved) == []
