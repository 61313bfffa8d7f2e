"""The records' generated code, end to end in CPython (the page's side is in
e2e/test_runtime_smoke.py): the build's import, with RECORD_CODE_ENV set, records every text the
package's records generate; a package that ships them (as the page's wheel does) gets code for
every record it imports, and leaves dataclasses as it was for everyone else."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from agentsurface._compat import DATACLASS_CODE, RECORD_CODE_ENV
from agentsurface._runtime_build.precompile import _IMPORT_PAGE_MODULES

PACKAGE = Path(importlib.util.find_spec("agentsurface").origin or "").parent  # type: ignore[union-attr]

# The build's import (precompile._NODE_DATACLASS_CODE), here with CPython: the table to argv[1].
RECORD = f"""
import dataclasses, importlib, importlib.util, json, marshal, pkgutil, sys
{_IMPORT_PAGE_MODULES}
from agentsurface._compat import recorded_code
texts = recorded_code()
with open(sys.argv[1], "wb") as out:
    out.write(importlib.util.MAGIC_NUMBER + marshal.dumps(texts))
print(json.dumps({{"texts": len(texts), "fast_inits": sum(t.startswith("def __init__(") for t in texts),
                  "installed": "exec" in vars(dataclasses)}}))
"""

# A page's import (sys.platform says so) of the package copied to argv[1] with the table, every
# exec watched: the code it runs, and the texts it has to compile.
IN_THE_PAGE = f"""
import builtins, dataclasses, importlib, json, marshal, pkgutil, sys, types
sys.platform = "emscripten"
sys.path.insert(0, sys.argv[1])
codes, texts = [], []
real_exec = builtins.exec
def spying(source, globals=None, locals=None, /):
    (codes if isinstance(source, types.CodeType) else texts).append(source)
    return real_exec(source, globals, locals)
builtins.exec = spying
{_IMPORT_PAGE_MODULES}
from agentsurface import _compat
table = _compat._compiled_code()
ran = set(map(id, codes))
served = sum(id(c) in ran for c in table.values())
recompiled = sum(text in table for text in texts)
texts.clear()
@dataclasses.dataclass(frozen=True)
class UsersOwn:
    x: int
print(json.dumps({{"from": agentsurface.__file__, "table": len(table), "served": served,
                  "recompiled": recompiled, "own": len(texts), "installed": "exec" in vars(dataclasses)}}))
"""


def test_the_build_records_the_records_code_and_a_page_gets_it(tmp_path: Path) -> None:
    table = tmp_path / DATACLASS_CODE
    env = {**os.environ, RECORD_CODE_ENV: "1"}
    recorded = json.loads(
        subprocess.run(
            [sys.executable, "-c", RECORD, str(table)], env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    assert recorded["texts"] > 300 and recorded["fast_inits"] >= 10  # ~124 records, ~15 hot
    assert recorded["installed"] is False

    copy = tmp_path / "page"
    shutil.copytree(PACKAGE, copy / "agentsurface", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(table, copy / "agentsurface" / DATACLASS_CODE)
    env.pop(RECORD_CODE_ENV)
    page = json.loads(
        subprocess.run(
            [sys.executable, "-c", IN_THE_PAGE, str(copy)], env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    assert page["from"].startswith(str(copy))
    assert page["table"] == recorded["texts"]
    assert page["served"] == page["table"]  # every text recorded was run from the table's code
    assert page["recompiled"] == 0  # and none of their texts reached exec to be compiled
    assert page["own"] > 0  # the page's own dataclass: its texts, compiled by dataclasses itself
    assert page["installed"] is False
