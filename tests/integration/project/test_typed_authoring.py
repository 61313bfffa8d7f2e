"""What mypy says of an app's declarations: a contract takes a JSON Schema dict or a pydantic
model and reads back a Schema, and a misspelt or mistyped option is an error, on the contracts
and on every decorator that passes its options to one (``**options: Unpack[...]``).

The app below is checked by ``mypy --strict`` in a subprocess; each line ending in
``# E: <code>`` must get exactly that error, and no other line any error.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

APP = '''
from typing import assert_type

from pydantic import BaseModel

from agentsurface import AgentComponent, ProcedureContract, action, observation
from agentsurface.django import procedure as view
from agentsurface.fastapi import procedure as route
from agentsurface.lowlevel import ActionContract, Concurrency, ObservationContract, Schema


class Note(BaseModel):
    title: str


add = ActionContract("Add", input={"type": "object", "properties": {}}, output=Note)
rows = ObservationContract("Rows", output={"type": "array"})
save = ProcedureContract(id="domain:notes.save", description="Save", effect="server-mutation", input=Note)
assert_type(add.input, Schema)
assert_type(add.output, Schema | None)
assert_type(rows.output, Schema)
assert_type(save.input, Schema)
assert_type(add.concurrency, Concurrency)

ActionContract("Add", inptu={})  # E: call-arg
ActionContract("Add", effect="server-mutation")  # E: arg-type
ObservationContract("Rows", output=Note, untrusted_output="yes")  # E: arg-type
ProcedureContract(id="domain:notes.save", description="Save", effect="delete")  # E: arg-type
ProcedureContract(id="domain:notes.save", description="Save", effect="destructive", timout=3)  # E: call-arg


class Notes(AgentComponent, type="notes.list", description="Notes"):
    @observation("Titles", untrusted_output=True, timeout=2.0, output={"type": "array"})
    def titles(self) -> list[str]:
        return []

    @action("Tag", confirmation="required", concurrency=Concurrency("capability"), input=Note)
    def tag(self, title: str) -> None: ...

    @action("Wipe", confirmaton="required")  # E: call-arg
    def wipe(self) -> None: ...

    @action("Leave", effect="destructive")  # E: arg-type
    def leave(self) -> None: ...

    @observation("Count", timeout="soon")  # E: arg-type
    def count(self) -> int:
        return 0


@route("domain:notes.delete", effect="destructive", reversible=False, policies=["owner"], output=None)
def delete() -> Note:
    return Note(title="")


@route("domain:notes.purge", effect="destroy")  # E: arg-type
def purge() -> Note:
    return Note(title="")


@view("domain:notes.archive", effect="server-mutation", input=Note, audit="full", meta={"k": 1})
def archive(request: object) -> None: ...


@view("domain:notes.restore", effect="server-mutation", confirmaton="required")  # E: call-arg
def restore(request: object) -> None: ...
'''

CONFIG = """
[mypy]
strict = True

[mypy-django.*]
ignore_missing_imports = True
"""


def test_mypy_checks_the_options_of_contracts_and_decorators(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)
    (tmp_path / "mypy.ini").write_text(CONFIG)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", str(tmp_path / "cache"), "app.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    expected = {
        (number, match.group(1))
        for number, line in enumerate(APP.splitlines(), start=1)
        if (match := re.search(r"# E: ([\w-]+)$", line))
    }
    found = {(int(m.group(1)), m.group(2)) for m in re.finditer(r"^app\.py:(\d+): error: .*\[([\w-]+)\]$", run.stdout, re.M)}
    assert len(expected) == 10
    assert found == expected, run.stdout + run.stderr
    assert run.returncode == 1 and f"Found {len(expected)} errors in 1 file" in run.stdout, run.stdout
