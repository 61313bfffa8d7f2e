"""Why a compile cannot produce a complete contract. Every problem is reported, none dropped."""

from __future__ import annotations

from typing import Literal, TypeAlias

from .._core.errors import AgentSurfaceError
from .._core.records import record

ProblemCode: TypeAlias = Literal[
    "invalid-config",
    "import-failed",
    "dynamic-declaration",
    "external-declaration",
    "duplicate-declaration",
    "invalid-declaration",
    "invalid-contract",
    "git-failed",
]


@record
class Problem:
    """One reason the contract is incomplete; ``where`` is a module or ``module:name``."""

    code: ProblemCode
    message: str
    where: str = ""

    def __str__(self) -> str:
        return (
            f"{self.where}: {self.message} [{self.code}]" if self.where else f"{self.message} [{self.code}]"
        )


class CompileError(AgentSurfaceError):
    """The compiler could not prove the contract complete (the CLI exits 2)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.where, p.code, p.message))
        super().__init__("; ".join(str(p) for p in self.problems))


class ContractFileError(AgentSurfaceError):
    """A contract file (committed or at a git base) is missing, unreadable or not a contract."""
