"""Capabilities contributed by a real installed distribution need the app's approval (AS-EXTERNAL-001..004).

The fixture distribution ``Acme_Widgets`` (tests/fixtures/acme_widgets: a component and a procedure)
is built into a wheel with hatchling and pip-installed into a throwaway venv, once per session. The
app (tests/fixtures/widget_shop) imports it; every command then runs in that venv as a subprocess,
as a user would run it: the compiler, ``check``'s exit codes, the page's authority built from the
committed contract, and the toolset over that authority's registry. A second venv holds release
1.1.0, which changes what the distribution contributes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures import edit

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
ACME = "acme-widgets"


@dataclass(frozen=True)
class Venv:
    python: Path

    def run(self, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "COLUMNS")}
        env["NO_COLOR"] = "1"
        return subprocess.run(
            [str(self.python), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )

    def cli(self, app: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(["-m", "agentsurface", *args], app)


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"{result.args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _wheel(source: Path, wheelhouse: Path) -> Path:
    """Build ``source`` with hatchling (installed by the test extra: no build isolation, offline)."""
    before = set(wheelhouse.glob("*.whl"))
    _ok(
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
             str(wheelhouse), str(source)],
            capture_output=True, text=True, timeout=120,
        )
    )  # fmt: skip
    (built,) = set(wheelhouse.glob("*.whl")) - before
    return built


def _venv(where: Path, wheel: Path) -> Venv:
    """A venv whose only own package is ``wheel``, pip-installed; agentsurface comes from this
    checkout's src and its dependencies from the dev venv (plain path lines: no .pth is run)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    (site,) = (where / "lib").glob("python3*/site-packages")
    (site / "dev_venv.pth").write_text(f"{REPO / 'src'}\n{sysconfig.get_paths()['purelib']}\n")
    venv = Venv(where / "bin" / "python")
    _ok(venv.run(["-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], where))
    return venv


@pytest.fixture(scope="session")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Releases 1.0.0 and 1.1.0 of Acme_Widgets (1.1.0 makes the order procedure destructive)."""
    work = tmp_path_factory.mktemp("acme")
    v1 = _wheel(FIXTURES / "acme_widgets", work / "wheelhouse")
    source = work / "acme_widgets-1.1"
    shutil.copytree(FIXTURES / "acme_widgets", source, ignore=shutil.ignore_patterns("__pycache__"))
    edit(source / "pyproject.toml", 'version = "1.0.0"', 'version = "1.1.0"')
    edit(source / "acme_widgets" / "__init__.py", 'effect="server-mutation"', 'effect="destructive"')
    return {"1.0.0": v1, "1.1.0": _wheel(source, work / "wheelhouse")}


@pytest.fixture(scope="session")
def venv(tmp_path_factory: pytest.TempPathFactory, wheels: dict[str, Path]) -> Venv:
    return _venv(tmp_path_factory.mktemp("venv") / "v", wheels["1.0.0"])


@pytest.fixture(scope="session")
def upgraded(tmp_path_factory: pytest.TempPathFactory, wheels: dict[str, Path]) -> Venv:
    """Another venv, with release 1.1.0 installed instead."""
    return _venv(tmp_path_factory.mktemp("venv") / "v11", wheels["1.1.0"])


@pytest.fixture
def app(tmp_path: Path) -> Path:
    return Path(
        shutil.copytree(
            FIXTURES / "widget_shop", tmp_path / "app", ignore=shutil.ignore_patterns("__pycache__")
        )
    )


def _approve(venv: Venv, app: Path) -> str:
    text = _ok(venv.cli(app, "approve", "Acme_Widgets"))  # any spelling of the name
    with (app / "pyproject.toml").open("a") as f:
        f.write("\n" + text)
    return text


def _contract(app: Path) -> dict[str, object]:
    return json.loads((app / ".agentsurface" / "contract.json").read_text())  # type: ignore[no-any-return]


# --------------------------------------------------------------- the compiler and the CLI


def test_the_installed_distribution_is_found_and_attributed_by_name_and_version(
    venv: Venv, app: Path
) -> None:
    probe = "import acme_widgets, sys; print(acme_widgets.__file__)"
    assert "site-packages" in _ok(venv.run(["-c", probe], app))  # really the installed copy

    result = venv.cli(app, "snapshot")
    assert result.returncode == 1, result.stderr  # written, but not approved: not done
    document = _contract(app)
    origins = {c["id"]: c["origin"] for c in document["contracts"]}  # type: ignore[attr-defined, index]
    assert origins["acme.widgets.panel"] == {
        "module": "acme_widgets",
        "name": "Panel",
        "file": "acme_widgets/__init__.py",  # inside the distribution, never where pip put it
        "distribution": ACME,
    }
    assert origins["domain:acme.widgets.order"]["distribution"] == ACME
    assert "distribution" not in origins["shop.basket"] and "distribution" not in origins["shop.desk"]
    (external,) = document["external"]  # type: ignore[misc]
    assert external["distribution"] == ACME and external["version"] == "1.0.0"
    assert external["declarations"] == ["acme.widgets.panel", "domain:acme.widgets.order"]
    # Integrity and consent are separate facts: a digest of what it contributes, no approval.
    assert external["contractDigest"].startswith("sha256:") and external["authorization"] is None
    assert str(app) not in json.dumps(document) and "site-packages" not in json.dumps(document)


def test_inspect_shows_the_origin_of_each_capability(venv: Venv, app: Path) -> None:
    result = venv.cli(app, "inspect", "--format", "json")
    assert result.returncode == 0, result.stderr  # inspect reports, it does not gate
    report = json.loads(result.stdout)
    origins = {c["id"]: c["origin"] for c in report["capabilities"]}
    assert origins == {
        "domain:acme.widgets.order": ACME,
        "view:acme.widgets.panel.addWidget": ACME,
        "view:acme.widgets.panel.widgetsShown": ACME,
        "view:shop.basket.items": "app",
        "view:shop.desk.pending": "app",
    }
    (contributor,) = report["contributors"]
    assert contributor["status"] == "unapproved" and contributor["version"] == "1.0.0"
    human = _ok(venv.cli(app, "inspect", "--plain"))
    assert "ORIGIN" in human and "acme-widgets 1.0.0: 3 capabilities · NOT APPROVED" in human


def test_check_fails_for_an_unapproved_contributor_and_says_what_to_paste(venv: Venv, app: Path) -> None:
    venv.cli(app, "snapshot")  # a current contract: what fails is consent alone
    for policy in ("all", "none"):  # no option makes it pass
        result = venv.cli(app, "check", "--policy", policy)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "acme-widgets 1.0.0 contributes 3 capabilities that the app has not approved" in result.stdout
    digest = _contract(app)["external"][0]["contractDigest"]  # type: ignore[index]
    assert "[tool.agentsurface.external.acme-widgets]" in result.stderr
    assert f'digest = "{digest}"' in result.stderr

    approval = _approve(venv, app)
    assert '"domain:acme.widgets.order",' in approval and "server-mutation" in approval
    assert venv.cli(app, "check").returncode == 1  # approved, but the committed contract is stale
    _ok(venv.cli(app, "snapshot"))  # now exits 0
    _ok(venv.cli(app, "check"))
    external = _contract(app)["external"][0]  # type: ignore[index]
    assert external["authorization"] == {"expectedDigest": external["contractDigest"]}


def test_a_changed_contribution_fails_distinctly_naming_both_digests(
    venv: Venv, app: Path, upgraded: Venv, tmp_path: Path
) -> None:
    _approve(venv, app)
    _ok(venv.cli(app, "snapshot"))
    approved = _contract(app)["external"][0]["contractDigest"]  # type: ignore[index]

    result = upgraded.cli(app, "check", "--format", "json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    (failure,) = [f for f in report["failures"] if f.startswith("external:")]
    assert "has not approved" not in failure  # not a new contributor: a changed one
    assert failure.startswith(
        "external: acme-widgets 1.1.0 changed what it contributes since the app approved it"
    )
    assert f"approved {approved}, now {report['contributors'][0]['contractDigest']}" in failure
    assert report["contributors"][0]["status"] == "changed"
    # The integrity section names what changed, so the review has something to read.
    changes = {(f["subject"], f["change"]) for f in report["integrity"]["findings"]}
    assert ("domain:acme.widgets.order", "effect-raised") in changes
    assert upgraded.cli(app, "snapshot").returncode == 1
    external = _contract(app)["external"][0]  # type: ignore[index]
    assert external["version"] == "1.1.0" and external["authorization"] == {"expectedDigest": approved}
    assert external["contractDigest"] != approved
    assert upgraded.cli(app, "bundle", "--out", str(tmp_path / "site")).returncode == 2  # never shipped


def test_a_malformed_approval_exits_2_instead_of_being_dropped(venv: Venv, app: Path) -> None:
    with (app / "pyproject.toml").open("a") as f:
        f.write('\n[tool.agentsurface.external.acme-widgets]\ndigest = "6f4b"\n')
    result = venv.cli(app, "check")
    assert result.returncode == 2
    assert "digest must be" in result.stdout + result.stderr


# --------------------------------------------------------------- the page and the toolset


def _page(venv: Venv, app: Path) -> dict[str, object]:
    return json.loads(_ok(venv.run(["agent_loop.py"], app)))  # type: ignore[no-any-return]


def test_the_page_refuses_an_unapproved_contributor_and_the_toolset_never_offers_it(
    venv: Venv, app: Path
) -> None:
    assert venv.cli(app, "snapshot").returncode == 1
    seen = _page(venv, app)
    outcome = seen["outcome"]
    assert isinstance(outcome, dict)
    assert outcome["Basket"] == "registered"
    for refused in ("Panel", "OrderDesk"):  # the dependency's component, and its procedure offered by ours
        assert outcome[refused]["error"] == "ExternalContractError"
        assert outcome[refused]["code"] == "AUTHORITY_VIOLATION"
        assert outcome[refused]["distribution"] == ACME
        assert "'acme-widgets' (1.0.0), which the app has not approved" in outcome[refused]["message"]
    assert seen["tools"] == ["view:shop.basket.items"]  # nothing of acme-widgets reaches the agent
    assert seen["calls"] == {}


def test_after_approval_the_page_registers_it_and_the_toolset_offers_its_tools(venv: Venv, app: Path) -> None:
    _approve(venv, app)
    _ok(venv.cli(app, "snapshot"))
    seen = _page(venv, app)
    assert seen["outcome"] == {"Basket": "registered", "Panel": "registered", "OrderDesk": "registered"}
    assert seen["tools"] == [
        "domain:acme.widgets.order",
        "view:acme.widgets.panel.addWidget",
        "view:acme.widgets.panel.widgetsShown",
        "view:shop.basket.items",
        "view:shop.desk.pending",
    ]
    calls = seen["calls"]
    assert isinstance(calls, dict)
    assert calls["view:acme.widgets.panel.addWidget"]["status"] == "ok"
    assert calls["view:acme.widgets.panel.widgetsShown"]["output"] == ["gear", "cog"]
    assert calls["domain:acme.widgets.order"]["output"] == {"ordered": 2}


def test_the_page_refuses_a_changed_contributor_naming_both_digests(
    venv: Venv, app: Path, upgraded: Venv, tmp_path: Path
) -> None:
    _approve(venv, app)
    assert upgraded.cli(app, "snapshot").returncode == 1  # the committed contract records the change
    external = _contract(app)["external"][0]  # type: ignore[index]
    seen = _page(upgraded, app)
    outcome = seen["outcome"]
    assert isinstance(outcome, dict)
    message = outcome["Panel"]["message"]
    assert outcome["Panel"]["distribution"] == ACME and "changed since the app approved it" in message
    assert external["authorization"]["expectedDigest"] in message and external["contractDigest"] in message
    assert outcome["Basket"] == "registered" and seen["tools"] == ["view:shop.basket.items"]
