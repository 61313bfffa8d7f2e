"""The page-error guard of e2e/conftest.py, proven by runs that must fail.

The probes below are tiny pages that misbehave on purpose. They only run when
AGENTSURFACE_E2E_GUARD_PROBE=1; the real test runs them in a pytest subprocess (its own
Chromium and server) and checks, from its JUnit report, that every misbehaving page failed its
test with the right problem, that an explicit allowance lets exactly its error through, and that
a stale allowance fails as well.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Route

ROOT = Path(__file__).resolve().parent.parent
PROBING = os.environ.get("AGENTSURFACE_E2E_GUARD_PROBE") == "1"
probe = pytest.mark.skipif(not PROBING, reason="guard probe: run by test_the_guard_fails_misbehaving_pages")

PLAIN = "/e2e/pages/__guard-probe.html"
PYSCRIPT = "/e2e/pages/__guard-probe-pyscript.html"


def _serve(path: str, html: str) -> Callable[[Any], None]:
    """A before_goto hook: the page at ``path`` (same origin as the real pages) is ``html``."""

    def install(run: Any) -> None:
        def fulfill(route: Route) -> None:
            route.fulfill(status=200, content_type="text/html", body=html)

        run.page.route(f"**{path}", fulfill)

    return install


def _plain(script: str) -> str:
    return f'<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><p id="out">probe</p><script>{script}</script>'


def _pyscript(code: str) -> str:
    return f"""<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module" src="../../web/dist/pyscript/core.js"></script></head>
<body><p id="out">waiting</p>
<script type="py" config="../../web/pyscript-config.json">
{code}
</script></body></html>"""


def _open_plain(open_page: Any, script: str) -> Any:
    run = open_page(PLAIN, before_goto=_serve(PLAIN, _plain(script)))
    run.page.wait_for_timeout(300)  # let timers and rejections fire
    return run


@probe
def test_probe_thrown_error(open_page: Any) -> None:
    _open_plain(open_page, "setTimeout(() => { throw new Error('probe: thrown'); }, 0);")


@probe
def test_probe_unhandled_rejection(open_page: Any) -> None:
    _open_plain(open_page, "Promise.reject(new Error('probe: rejected'));")


@probe
def test_probe_console_error(open_page: Any) -> None:
    _open_plain(open_page, "console.error('probe: console');")


@probe
def test_probe_page_the_module_built_itself(browsers: Any, server_url: str) -> None:
    """A page made straight from the shared browsers (as class-scoped fixtures do) is watched too."""
    context = browsers.get("plain").new_context()
    try:
        page = context.new_page()
        _serve(PLAIN, _plain("setTimeout(() => { throw new Error('probe: own page'); }, 0);"))(
            type("Run", (), {"page": page})()
        )
        page.goto(server_url + PLAIN)
        page.wait_for_timeout(300)
    finally:
        context.close()


@probe
def test_probe_pyscript_stderr_box(open_page: Any) -> None:
    code = "import sys\nfrom pyscript import document\nprint('probe: stderr', file=sys.stderr)\ndocument.getElementById('out').textContent = 'done'"
    run = open_page(PYSCRIPT, before_goto=_serve(PYSCRIPT, _pyscript(code)))
    run.page.wait_for_function("() => document.getElementById('out').textContent === 'done'")


@probe
def test_probe_pyscript_exception(open_page: Any) -> None:
    run = open_page(
        PYSCRIPT, before_goto=_serve(PYSCRIPT, _pyscript("raise RuntimeError('probe: python raised')"))
    )
    run.page.wait_for_selector(".py-error")


@probe
@pytest.mark.allow_page_errors(r"^probe: allowed$")
def test_probe_allowed_error_passes(open_page: Any) -> None:
    _open_plain(open_page, "console.error('probe: allowed');")


@probe
@pytest.mark.allow_page_errors(r"^probe: allowed$")
def test_probe_allowance_is_narrow(open_page: Any) -> None:
    _open_plain(open_page, "console.error('probe: allowed'); console.error('probe: not allowed');")


@probe
@pytest.mark.allow_page_errors(r"probe: never happens")
def test_probe_stale_allowance_fails(open_page: Any) -> None:
    _open_plain(open_page, "console.log('nothing wrong');")


@probe
def test_probe_quiet_page_passes(open_page: Any) -> None:
    _open_plain(open_page, "console.log('fine'); console.warn('a warning is not an error');")


EXPECTED_FAILURES = {
    "test_probe_thrown_error": ["[pageerror]", "probe: thrown"],
    "test_probe_unhandled_rejection": ["[pageerror]", "probe: rejected"],
    "test_probe_console_error": ["[console.error] probe: console"],
    "test_probe_page_the_module_built_itself": ["[pageerror]", "probe: own page"],
    "test_probe_pyscript_stderr_box": ["[pyscript-error-box] probe: stderr"],
    "test_probe_pyscript_exception": ["[pyscript-error-box]", "RuntimeError: probe: python raised"],
    "test_probe_allowance_is_narrow": ["unexpected [console.error] probe: not allowed"],
    "test_probe_stale_allowance_fails": ["stale allowance", "probe: never happens"],
}
EXPECTED_PASSES = {"test_probe_allowed_error_passes", "test_probe_quiet_page_passes"}


@pytest.mark.skipif(PROBING, reason="the probes' own run")
def test_the_guard_fails_misbehaving_pages(web_dist: Path, tmp_path: Path) -> None:
    report = tmp_path / "probes.xml"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(Path(__file__)),
            "-k",
            "probe",
            "-p",
            "no:cacheprovider",
            "-q",
            f"--junitxml={report}",
        ],
        cwd=ROOT,
        env={**os.environ, "AGENTSURFACE_E2E_GUARD_PROBE": "1", "AGENTSURFACE_E2E_SKIP_BUILD": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 1, result.stdout + result.stderr  # some tests failed, none crashed
    outcomes: dict[str, str | None] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        problems = [child for child in case if child.tag in ("failure", "error")]
        text = "\n".join((p.get("message") or "") + (p.text or "") for p in problems)
        # A probe's page errors fail it at teardown: a pass in "call" plus an error in "teardown".
        outcomes[case.get("name", "")] = text if problems else None
    assert set(outcomes) == set(EXPECTED_FAILURES) | EXPECTED_PASSES, outcomes
    for name in EXPECTED_PASSES:
        assert outcomes[name] is None, f"{name} should pass:\n{outcomes[name]}"
    for name, needles in EXPECTED_FAILURES.items():
        text = outcomes[name]
        assert text is not None, f"{name} should have failed on its page errors"
        assert "page errors during this test" in text or "stale" in text, text
        for needle in needles:
            assert needle in text, f"{name}: {needle!r} not in\n{text}"
