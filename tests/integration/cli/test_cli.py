"""The agentsurface command on the fixture app: exit codes, integrity, drift, the four formats."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentsurface.cli import main
from tests.fixtures import copy_shop, edit

SURFACE = "shop/surface.py"
WIDEN = ('confirmation="required",', 'confirmation="optional",')  # checkout: lower confirmation
NARROW = ('tags=["cart"])', 'tags=["cart"], policies=["signed-in"])')  # cart: added policy
NEUTRAL = ("Search the catalogue.", "Search the whole catalogue.")


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = copy_shop(tmp_path / "app")
    assert main(["--root", str(root), "snapshot"]) == 0
    return root


def run(root: Path, *args: str) -> int:
    return main(["--root", str(root), *args])


def test_snapshot_writes_the_contract_and_is_idempotent(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = app / ".agentsurface" / "contract.json"
    first = contract.read_bytes()
    assert run(app, "snapshot") == 0
    assert capsys.readouterr().out.strip() == "unchanged .agentsurface/contract.json"
    assert contract.read_bytes() == first
    assert run(app, "snapshot", "--output", str(app / "elsewhere.json")) == 0
    assert (app / "elsewhere.json").read_bytes() == first


def test_check_passes_on_a_current_contract(app: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(app, "check") == 0
    out = capsys.readouterr()
    assert out.out.startswith("agentsurface check: PASS")
    assert out.err == ""


def test_a_stale_contract_fails_check_with_the_next_command_on_stderr(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(app / SURFACE, *WIDEN)
    assert run(app, "check") == 1
    out = capsys.readouterr()
    assert "Integrity (source vs .agentsurface/contract.json): stale" in out.out
    assert "confirmation-lowered" in out.out
    assert "run: agentsurface snapshot" in out.err
    assert run(app, "inspect") == 0  # findings never change inspect's exit code
    capsys.readouterr()
    assert run(app, "snapshot") == 0
    assert run(app, "check") == 0


def test_a_missing_contract_fails_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = copy_shop(tmp_path / "app")
    assert run(root, "check", "--format", "json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["integrity"]["status"] == "missing"
    assert report["exitCode"] == 1


def test_compile_and_contract_failures_exit_2_without_writing(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    contract = app / ".agentsurface" / "contract.json"
    before = contract.read_bytes()
    with (app / SURFACE).open("a") as source:
        source.write(
            "\nEXTRA = [ProcedureContract(id='domain:shop.x', description='d', effect='server-query')]\n"
        )
    assert run(app, "snapshot") == 2
    assert "dynamic-declaration" in capsys.readouterr().err
    assert contract.read_bytes() == before
    assert run(app, "check") == 2
    capsys.readouterr()
    assert run(app, "inspect", "--format", "json") == 2
    assert json.loads(capsys.readouterr().out)["problems"][0]["code"] == "dynamic-declaration"

    edit(app / SURFACE, "\nEXTRA = [", "\n_EXTRA = [")  # a list, not a declaration: still dynamic
    source = (app / SURFACE).read_text()
    (app / SURFACE).write_text(source[: source.index("\n_EXTRA = [")] + "\n")
    contract.write_text("{ not json")
    assert run(app, "check") == 2
    assert "invalid-contract" in capsys.readouterr().out


def git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


@pytest.fixture
def repo(app: Path) -> Path:
    git(app, "init", "-q", "-b", "main")
    git(app, "add", ".")
    git(app, "commit", "-q", "-m", "base")
    return app


def test_check_base_reports_drift_and_the_policy_selects_what_fails(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(repo / SURFACE, *WIDEN)
    assert run(repo, "snapshot") == 0  # refreshing fixes integrity, not the drift
    capsys.readouterr()
    assert run(repo, "check", "--base", "main", "--format", "json") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["integrity"]["status"] == "current"
    assert report["drift"]["findings"] == [
        {
            "subject": "domain:shop.checkout",
            "change": "confirmation-lowered",
            "class": "widening",
            "detail": "required → optional",
        }
    ]
    assert run(repo, "check", "--base", "main", "--policy", "narrowing") == 0
    assert run(repo, "check", "--base", "main", "--policy", "none") == 0
    assert run(repo, "check", "--base", "main", "--policy", "widening") == 1
    assert run(repo, "inspect", "--base", "main") == 0
    assert "confirmation-lowered" in capsys.readouterr().out


def test_check_base_failures_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(repo, "check", "--base", "no-such-ref") == 2
    assert "unknown git ref" in capsys.readouterr().out
    assert run(repo, "check", "--base", "main") == 0
    assert "Drift (main → .agentsurface/contract.json): no changes" in capsys.readouterr().out


def report_of_every_class(repo: Path) -> Path:
    for old, new in (WIDEN, NARROW, NEUTRAL):
        edit(repo / SURFACE, old, new)
    assert run(repo, "snapshot") == 0
    return repo


def test_json_md_and_github_render_the_same_report(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report_of_every_class(repo)
    capsys.readouterr()
    outputs = {}
    for fmt in ("json", "md", "github"):
        assert run(repo, "check", "--base", "main", "--format", fmt, "--policy", "widening") == 1
        outputs[fmt] = capsys.readouterr().out
    report = json.loads(outputs["json"])
    expected = {(f["class"], f["subject"], f["change"]) for f in report["drift"]["findings"]}
    assert {c for c, _, _ in expected} == {"widening", "narrowing", "neutral"}

    md_rows = set(
        re.findall(r"^\| (widening|narrowing|neutral) \| `([^`]+)` \| ([a-z-]+) \|", outputs["md"], re.M)
    )
    assert md_rows == expected
    annotations = re.findall(
        r"^::(error|warning|notice) title=agentsurface drift%3A (\w+)::(\S+): ([a-z-]+)",
        outputs["github"],
        re.M,
    )
    assert {(c, s, ch) for _, c, s, ch in annotations} == expected
    levels = {c: level for level, c, _, _ in annotations}
    assert levels == {"widening": "error", "narrowing": "notice", "neutral": "notice"}
    assert outputs["github"].endswith(outputs["md"])  # the same Markdown body follows the annotations
    md_capabilities = re.findall(r"^\| ((?:view|domain):\S+) \|", outputs["md"], re.M)
    assert md_capabilities == [r["id"] for r in report["capabilities"]]


def test_json_is_canonical_and_has_no_checkout_path(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(repo, "inspect", "--json") == 0
    out = capsys.readouterr().out
    assert (
        out == json.dumps(json.loads(out), sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    )
    assert str(repo) not in out


def test_human_output_is_plain_and_deterministic_off_a_terminal(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_of_every_class(repo)
    capsys.readouterr()
    texts = []
    for _ in range(2):
        run(repo, "inspect", "--base", "main", "--detail")
        texts.append(capsys.readouterr().out)
    assert texts[0] == texts[1]
    assert "\x1b[" not in texts[0]
    for word in (
        "CAPABILITY",
        "REACH",
        "destructive",
        "high",
        "required",
        "signed-in",
        "widening",
        "narrowing",
    ):
        assert word in texts[0]
    assert "The SKUs in the cart." in texts[0]  # detail prints descriptions under rows
    run(repo, "inspect", "--verbosity", "min")
    minimal = capsys.readouterr().out
    assert "CAPABILITY" not in minimal and "5 capabilities in 3 declarations" in minimal


def test_colour_at_a_terminal_only_repeats_words(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from io import StringIO

    from agentsurface.cli.commands import build_report
    from agentsurface.cli.main import emit

    class Terminal(StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "120")
    report = build_report("inspect", repo, None, "all")
    coloured, plain = Terminal(), StringIO()
    env = {k: os.environ.pop(k) for k in ("NO_COLOR", "CI") if k in os.environ}
    try:
        emit(report, "human", "normal", False, coloured)
    finally:
        os.environ.update(env)
    emit(report, "human", "normal", False, plain)
    assert "\x1b[" in coloured.getvalue()
    def words(text: str) -> list[str]:  # the rule under the header follows the terminal's width
        return [w for w in re.sub(r"\x1b\[[0-9;]*m", "", text).split() if set(w) != {"─"}]

    assert words(coloured.getvalue()) == words(plain.getvalue())


def test_python_dash_m_and_the_console_script_run_the_same_command(repo: Path) -> None:
    for command in (
        [sys.executable, "-m", "agentsurface"],
        [str(Path(sys.executable).parent / "agentsurface")],
    ):
        done = subprocess.run(
            [*command, "check", "--format", "json"], cwd=repo, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["verdict"] == "pass"
