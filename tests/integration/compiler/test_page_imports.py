"""The page's import cost stays flat: the compiler and CLI load only when asked for."""

from __future__ import annotations

import subprocess
import sys


def loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_importing_agentsurface_loads_no_compiler_cli_or_rich() -> None:
    modules = loaded_after("import agentsurface")
    assert not {m for m in modules if m.startswith(("agentsurface.compiler", "agentsurface.cli", "rich"))}


def test_the_page_side_loader_adds_only_itself_to_what_the_page_loads() -> None:
    extra = loaded_after("import agentsurface.compiler.load") - loaded_after("import agentsurface")
    assert extra == {"agentsurface.compiler", "agentsurface.compiler.load"}
