"""The app's consent to capabilities contributed by installed distributions.

Consent lives in ``pyproject.toml``, one table per approved distribution, keyed by its name (a
name is what a reviewer approves; where pip put the files is a property of the machine)::

    [tool.agentsurface.external.acme-widgets]
    digest = "sha256:…"                  # contractDigest of what acme-widgets contributes
    capabilities = [                     # optional, checked: the ids this approval covers
      "domain:acme.widgets.order",
      "view:acme.widgets.panel.show",
    ]

``digest`` pins the contribution: any change to a contributed contract changes it, and the build
fails until someone reviews the change and moves the digest. ``capabilities`` is there for the
reviewer (the pull request that approves a dependency shows what it may do, one id a line); when
present it must list exactly the contributed capabilities. A malformed approval is a config error
(the CLI exits 2): an approval is never silently dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from .._core.contracts.external import DIGEST_RE, Contributor, normalize_distribution
from .._core.records import record
from .errors import CompileError, Problem

_TABLE = "[tool.agentsurface.external]"
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


@record
class Approval:
    """The app's approval of one distribution's contribution."""

    distribution: str  # normalized
    digest: str
    capabilities: tuple[str, ...] | None = None


def _invalid(message: str, where: str) -> CompileError:
    return CompileError([Problem("invalid-config", message, f"pyproject.toml {where}")])


def parse_approvals(table: Any) -> dict[str, Approval]:
    """``[tool.agentsurface.external]`` → approvals by normalized distribution name."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        raise _invalid("external must be a table of approvals keyed by distribution name", _TABLE)
    approvals: dict[str, Approval] = {}
    for key, value in table.items():
        where = f"[tool.agentsurface.external.{key}]"
        name = normalize_distribution(key)
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", name):
            raise _invalid(f"{key!r} is not a distribution name", where)
        if name in approvals:
            raise _invalid(f"{name!r} is approved twice (distribution names compare normalized)", where)
        if not isinstance(value, Mapping):
            raise _invalid('an approval is a table: digest = "sha256:…" (and optionally capabilities)', where)
        unknown = sorted(set(value) - {"digest", "capabilities"})
        if unknown:
            raise _invalid(f"unknown keys {unknown} (an approval has digest and capabilities)", where)
        digest = value.get("digest")
        if not isinstance(digest, str) or not DIGEST_RE.fullmatch(digest):
            raise _invalid(f'digest must be "sha256:" and 64 lowercase hex digits, got {digest!r}', where)
        capabilities = value.get("capabilities")
        if capabilities is not None and (
            not isinstance(capabilities, list) or not all(isinstance(c, str) for c in capabilities)
        ):
            raise _invalid(f"capabilities must be a list of capability ids, got {capabilities!r}", where)
        approvals[name] = Approval(name, digest, None if capabilities is None else tuple(capabilities))
    return approvals


def check_listed_capabilities(approval: Approval, contributed: Sequence[str]) -> None:
    """An approval that lists capabilities must list exactly what the distribution contributes
    (only checked when its digest matches: a changed contribution is reported as changed)."""
    if approval.capabilities is None or sorted(approval.capabilities) == sorted(contributed):
        return
    missing = sorted(set(contributed) - set(approval.capabilities))
    extra = sorted(set(approval.capabilities) - set(contributed))
    raise _invalid(
        f"the approval's capabilities disagree with what {approval.distribution!r} contributes "
        f"(not listed: {missing}, listed but not contributed: {extra}); fix the list",
        f"[tool.agentsurface.external.{approval.distribution}]",
    )


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else f'"{name}"'


def approval_toml(contributor: Contributor, capabilities: Sequence[str]) -> str:
    """The pyproject.toml table that approves ``contributor`` as it is now (what to paste)."""
    lines = [
        f"[tool.agentsurface.external.{_key(contributor.distribution)}]",
        f'digest = "{contributor.contract_digest}"',
        "capabilities = [",
        *(f'  "{c}",' for c in sorted(capabilities)),
        "]",
    ]
    return "\n".join(lines) + "\n"
