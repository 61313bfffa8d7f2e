"""The repository's commit-msg hook (.githooks/commit-msg): subjects of at most 72 characters."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HOOK = Path(__file__).resolve().parents[3] / ".githooks" / "commit-msg"


def run_hook(message: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    file = tmp_path / "COMMIT_EDITMSG"
    file.write_text(message, encoding="utf-8")
    return subprocess.run([sys.executable, str(HOOK), str(file)], capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    "message",
    [
        "x" * 72,
        "routes: one described() for both halves\n\nA body line can be as long as it needs to be, "
        "longer than seventy-two characters.\n",
        "fix: a subject\n# Please enter the commit message for your changes. Lines starting with '#' "
        "will be ignored, and an empty message aborts the commit.\n",
    ],
)
def test_a_short_subject_passes(message: str, tmp_path: Path) -> None:
    assert run_hook(message, tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("message", "says"),
    [
        ("x" * 73, "73 characters; keep it to 72"),
        ("", "no subject"),
        ("# only a comment\n", "no subject"),
        ("subject\nbody right under it\n", "blank line"),
    ],
)
def test_a_long_or_missing_subject_is_refused_with_the_reason(message: str, says: str, tmp_path: Path) -> None:
    done = run_hook(message, tmp_path)
    assert done.returncode == 1
    assert says in done.stderr


def test_the_hook_is_executable() -> None:
    assert HOOK.stat().st_mode & 0o111
