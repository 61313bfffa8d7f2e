"""The release workflow (.github/workflows/release.yml), parsed: tags ``v*`` only; a build job that
checks the tag against the project's version, builds the sdist and wheel, checks them with twine
and uploads them; a publish job after it that uploads them to PyPI by trusted publishing (an OIDC
token, never a stored password or API token). Its version check runs here for real."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
PUBLISH_ACTION = "pypa/gh-action-pypi-publish@release/v1"


@pytest.fixture(scope="module")
def workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def steps(workflow: dict[Any, Any], job: str) -> list[dict[str, Any]]:
    found = workflow["jobs"][job]["steps"]
    assert isinstance(found, list)
    return found


def index_of(job_steps: list[dict[str, Any]], *, uses: str | None = None, runs: str | None = None) -> int:
    for index, step in enumerate(job_steps):
        if uses is not None and str(step.get("uses", "")).startswith(uses):
            return index
        if runs is not None and runs in str(step.get("run", "")):
            return index
    raise AssertionError(f"no step {'uses ' + uses if uses else 'runs ' + str(runs)}")


def project_version() -> str:
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert isinstance(version, str)
    return version


def test_it_runs_on_version_tags_only(workflow: dict[Any, Any]) -> None:
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert trigger == {"push": {"tags": ["v*"]}}


def test_the_build_job_builds_checks_and_uploads_in_order(workflow: dict[Any, Any]) -> None:
    build = steps(workflow, "build")
    checkout = index_of(build, uses="actions/checkout@")
    python = index_of(build, uses="actions/setup-python@")
    version_check = index_of(build, runs='"v$version"')
    built = index_of(build, runs="python -m build")
    checked = index_of(build, runs="twine check --strict dist/*")
    uploaded = index_of(build, uses="actions/upload-artifact@")
    assert checkout < python < version_check < built < checked < uploaded
    assert build[uploaded]["with"]["path"].rstrip("/") == "dist"
    assert "id-token" not in workflow["jobs"]["build"].get("permissions", {})
    assert workflow.get("permissions") == {"contents": "read"}  # nothing else for any job by default


def test_the_publish_job_uses_trusted_publishing_after_the_build(workflow: dict[Any, Any]) -> None:
    publish = workflow["jobs"]["publish"]
    assert publish["needs"] in ("build", ["build"])
    environment = publish["environment"]
    assert (environment["name"] if isinstance(environment, dict) else environment) == "pypi"
    assert publish["permissions"] == {"id-token": "write"}
    publish_steps = steps(workflow, "publish")
    downloaded = index_of(publish_steps, uses="actions/download-artifact@")
    uploaded_name = steps(workflow, "build")[index_of(steps(workflow, "build"), uses="actions/upload-artifact@")]
    assert publish_steps[downloaded]["with"]["name"] == uploaded_name["with"]["name"]
    assert publish_steps[downloaded]["with"]["path"].rstrip("/") == "dist"
    published = index_of(publish_steps, uses=PUBLISH_ACTION)
    assert downloaded < published
    assert publish_steps[published]["uses"] == PUBLISH_ACTION
    # Trusted publishing: no password or token handed to the action, no secret used anywhere.
    assert not {"password", "user", "username"} & set(publish_steps[published].get("with") or {})
    assert "secrets." not in WORKFLOW.read_text(encoding="utf-8")


@pytest.mark.parametrize(("tag", "passes"), [("v{version}", True), ("v{version}.post1", False), ("{version}", False)])
def test_the_version_check_step_compares_the_tag_with_pyproject(
    workflow: dict[Any, Any], tmp_path: Path, tag: str, passes: bool
) -> None:
    build = steps(workflow, "build")
    step = build[index_of(build, runs='"v$version"')]
    assert step["env"]["TAG"] == "${{ github.ref_name }}"
    (tmp_path / "python").symlink_to(sys.executable)  # the runner's `python` is setup-python's
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", "TAG": tag.format(version=project_version())}
    done = subprocess.run(["bash", "-eo", "pipefail", "-c", step["run"]], cwd=REPO, env=env, capture_output=True, text=True)
    assert (done.returncode == 0) is passes, done.stdout + done.stderr
    if not passes:
        assert f"expected v{project_version()}" in done.stdout
