"""Issue 43.10: an app's tests run without warnings from the test tools agentsurface[testing]
brings (pytest-asyncio's unset loop scope, pytest-playwright's deprecated fixture), whether or
not the app's configuration says anything about them."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
import shutil

import pytest

from agentsurface.testing import with_webmcp


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return with_webmcp(browser_type_launch_args, executable_path=shutil.which("chromium"))
"""

APP_TESTS = """
import pytest


def test_a_page_test(page):   # pytest-playwright's page, in Chromium
    page.set_content("<p>hi</p>")


@pytest.mark.asyncio
async def test_an_async_harness_test():
    pass
"""


def test_an_apps_tests_run_without_warnings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_app=APP_TESTS)
    pytester.makeconftest(CONFTEST)
    pytester.makepyprojecttoml('[project]\nname = "app"\nversion = "0"\n')
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 2, result.stdout.str()
    assert "warnings" not in outcomes and "warning" not in outcomes, result.stdout.str()


def test_the_apps_own_loop_scope_is_kept(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_app=APP_TESTS)
    pytester.makeconftest(CONFTEST)
    pytester.makepyprojecttoml(
        '[project]\nname = "app"\nversion = "0"\n\n[tool.pytest.ini_options]\n'
        'asyncio_default_fixture_loop_scope = "module"\n'
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    assert "asyncio: mode=strict" in result.stdout.str() or result.ret == 0
    assert "default_fixture_loop_scope=module" in result.stdout.str(), result.stdout.str()
