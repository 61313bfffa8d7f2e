"""A test's speed class is the folder it sits in (tests/conftest.py): tests/unit/ is ``unit``,
tests/integration/ is ``integration``, each test gets exactly that one marker, and a test file
anywhere else under tests/, or a speed marker written on a test, fails the collection instead of
running in the wrong suite. Run here on a copy of the conftest in a throwaway tree."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).resolve().parents[2] / "conftest.py"
SPEEDS = ("unit", "integration", "e2e")

# Each test checks its own markers: exactly the one its folder gives.
OWN_SPEED = """
def test_{name}(request):
    assert [m.name for m in request.node.iter_markers() if m.name in {speeds!r}] == [{speed!r}]
"""


@pytest.fixture
def tree(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A suite laid out as tests/ is, with the repository's conftest (under another package name:
    the outer run has imported ``tests`` already), and no installed plugins (the outer run has them)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    root = pytester.mkpydir("suite")
    (root / "conftest.py").write_text(CONFTEST.read_text())
    for folder in ("unit", "unit/core", "integration", "integration/server", "helpers"):
        pytester.mkpydir(f"suite/{folder}")
    pytester.makeini("[pytest]\nmarkers =\n    unit: u\n    integration: i\n    e2e: e\n")
    return root


def write_test(root: Path, rel: str, speed: str, extra: str = "") -> None:
    name = Path(rel).stem.removeprefix("test_")
    (root / rel).write_text(f"import pytest\n{extra}\n" + OWN_SPEED.format(name=name, speeds=SPEEDS, speed=speed))


def test_each_test_gets_the_speed_of_its_folder_and_only_that(pytester: pytest.Pytester, tree: Path) -> None:
    write_test(tree, "unit/test_top.py", "unit")
    write_test(tree, "unit/core/test_deep.py", "unit")
    write_test(tree, "integration/server/test_served.py", "integration")
    unit = pytester.runpytest("-m", "unit", "-v", "-p", "no:cacheprovider")
    unit.assert_outcomes(passed=2, deselected=1)
    unit.stdout.fnmatch_lines(["*unit/core/test_deep.py::test_deep PASSED*", "*unit/test_top.py::test_top PASSED*"])
    integration = pytester.runpytest("-m", "integration", "-v", "-p", "no:cacheprovider")
    integration.assert_outcomes(passed=1, deselected=2)
    integration.stdout.fnmatch_lines(["*integration/server/test_served.py::test_served PASSED*"])


@pytest.mark.parametrize("rel", ["test_loose.py", "helpers/test_loose.py"])
def test_a_test_file_outside_both_folders_fails_the_collection(
    pytester: pytest.Pytester, tree: Path, rel: str
) -> None:
    write_test(tree, "unit/test_fine.py", "unit")
    write_test(tree, rel, "unit")
    for selection in ("unit", "integration"):
        result = pytester.runpytest("-m", selection, "-p", "no:cacheprovider")
        assert result.ret == pytest.ExitCode.INTERRUPTED
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines([f"*suite/{rel} is outside tests/unit/ and tests/integration/*"])


@pytest.mark.parametrize(
    "extra", ["pytestmark = pytest.mark.integration", "pytestmark = [pytest.mark.unit]"], ids=["other", "same"]
)
def test_a_speed_marker_written_on_a_module_fails_the_collection(
    pytester: pytest.Pytester, tree: Path, extra: str
) -> None:
    write_test(tree, "unit/test_marked.py", "unit", extra)
    result = pytester.runpytest("-m", "unit", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*speed markers under tests/ come from the folder only*", "*unit/test_marked.py::test_marked*"])


def test_a_speed_marker_written_on_a_test_fails_the_collection(pytester: pytest.Pytester, tree: Path) -> None:
    (tree / "integration/test_decorated.py").write_text(
        "import pytest\n\n@pytest.mark.unit\ndef test_decorated():\n    pass\n\ndef test_plain():\n    pass\n"
    )
    result = pytester.runpytest("-m", "integration", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*integration/test_decorated.py::test_decorated: @pytest.mark.unit*"])
    assert "test_plain" not in result.stderr.str()
