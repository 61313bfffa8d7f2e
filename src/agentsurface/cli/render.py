"""Renderings of one ``Report``: human (rich; plain when not a terminal), Markdown, GitHub, JSON.

Colour only repeats a word (an effect, a grade, a verdict): the plain text carries every fact.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal, TypeAlias

from .._core.jsonvalue import canonical_json
from ..compiler.diff import Finding
from .report import Report, Row, Section, selected

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

Verbosity: TypeAlias = Literal["min", "normal", "detail"]
Format: TypeAlias = Literal["human", "json", "md", "github"]
COLUMNS = ("CAPABILITY", "KIND", "EFFECT", "REACH", "CONFIRM", "POLICIES")
NONE = "—"
CAVEAT = (
    "The contract is what the code can declare. CONFIRM and POLICIES are declarations: whether a "
    "policy admits, denies or hides a capability depends on the actor, input and context of a real "
    "invocation, which no command performs."
)

# Effects cool when they read, warm when they write; grades green through red.
EFFECT_STYLE = {
    "read": "cyan",
    "server-query": "blue",
    "local-state": "green",
    "navigation": "green",
    "server-mutation": "yellow",
    "external-side-effect": "magenta",
    "destructive": "red",
}
REACH_STYLE = {"low": "green", "medium": "yellow", "high": "red"}
CLASS_STYLE = {"widening": "red", "narrowing": "green", "neutral": "dim"}
VERDICT_STYLE = {"pass": "bold green", "fail": "bold red", "error": "bold red"}


def cells(row: Row) -> tuple[str, str, str, str, str, str]:
    return (
        row.id,
        row.kind,
        row.effect,
        row.reach,
        row.confirmation if row.confirmation != "never" else NONE,
        ", ".join(row.policies) or NONE,
    )


def shows_origin(report: Report) -> bool:
    """The ORIGIN column appears when installed distributions contribute (else all is the app's)."""
    return any(r.external for r in report.rows)


def contributor_lines(report: Report) -> list[str]:
    """One line per contributing distribution: version, size, consent and digests."""
    lines = []
    for c in report.contributors:
        count = sum(1 for r in report.rows if r.origin == c.distribution)
        state = {
            "approved": f"approved ({c.contract_digest})",
            "unapproved": f"NOT APPROVED (digest {c.contract_digest})",
            "changed": f"CHANGED since approved (approved {c.expected_digest}, now {c.contract_digest})",
        }[c.status]
        lines.append(f"{c.distribution} {c.version}: {count} capabilities · {state}")
    lines += [
        f"{name}: approved in pyproject.toml but contributes nothing now (the approval can go)"
        for name in report.unused_approvals
    ]
    return lines


def headline_text(report: Report) -> str:
    h = report.headline()
    reach = h["reach"]
    assert isinstance(reach, dict)
    return (
        f"{h['capabilities']} capabilities in {h['declarations']} declarations · "
        f"{h['gated']} gated ({h['gatedPercent']}%) · reach: {reach['low']} low, "
        f"{reach['medium']} medium, {reach['high']} high · integrity: {h['integrity']}"
    ) + _contributed(report)


def _contributed(report: Report) -> str:
    if not report.contributors:
        return ""
    count = sum(1 for r in report.rows if r.external)
    pending = sum(1 for c in report.contributors if c.status != "approved")
    shippers = len(report.contributors)
    return (
        f" · {count} contributed by {shippers} installed distribution{'s' if shippers != 1 else ''}"
        + (f", {pending} not approved" if pending else "")
    )


def section_title(section: Section, report: Report) -> str:
    if section.name == "integrity":
        return f"Integrity (source vs {report.contract}): {section.status}"
    return f"Drift ({section.base} → {report.contract}): {section.status}"


def counts_text(section: Section) -> str:
    return ", ".join(f"{n} {c}" for c, n in section.counts().items())


def _sections(report: Report) -> list[Section]:
    return [s for s in (report.integrity, report.drift) if s is not None]


def _failing(report: Report) -> set[Finding]:
    return set(selected(report.policy, report.drift.findings)) if report.drift else set()


# ---------------------------------------------------------------- json


def render_json(report: Report) -> str:
    return canonical_json(report.to_json()) + "\n"


# ---------------------------------------------------------------- markdown / github


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_md(report: Report) -> str:
    lines = [f"## agentsurface {report.command}: **{report.verdict}**", "", headline_text(report), ""]
    for problem in report.problems:
        lines.append(f"- **{problem.code}** `{_md(problem.where)}`: {_md(problem.message)}")
    if report.rows:
        origin = shows_origin(report)
        columns = (*COLUMNS, "ORIGIN") if origin else COLUMNS
        lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += [
            "| " + " | ".join(_md(c) for c in (*cells(r), *((r.origin,) if origin else ()))) + " |"
            for r in report.rows
        ]
        lines.append("")
    if report.contributors or report.unused_approvals:
        lines += ["### Installed distributions that contribute capabilities", ""]
        lines += [f"- {_md(line)}" for line in contributor_lines(report)] + [""]
    for section in _sections(report):
        lines += [f"### {section_title(section, report)}", "", counts_text(section), ""]
        if section.findings:
            lines += ["| CLASS | SUBJECT | CHANGE | DETAIL |", "|---|---|---|---|"]
            lines += [
                f"| {f.cls} | `{_md(f.subject)}` | {f.change} | {_md(f.detail) or NONE} |"
                for f in section.findings
            ]
            lines.append("")
    if report.failures:
        lines += ["### Failures", ""] + [f"- {_md(f)}" for f in report.failures] + [""]
    if report.manifest_hash:
        lines += [f"Contract `{report.contract}` {report.manifest_hash} ({report.compiler}).", ""]
    lines.append(f"_{CAVEAT}_")
    return "\n".join(lines) + "\n"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(level: str, title: str, message: str) -> str:
    return f"::{level} title={_escape_property(title)}::{_escape_data(message)}"


def github_annotations(report: Report) -> list[str]:
    """One workflow annotation per problem, failure and finding; failing findings are errors."""
    out = [
        _annotation("error", f"agentsurface {p.code}", f"{p.where}: {p.message}") for p in report.problems
    ]
    out += [_annotation("error", "agentsurface check failed", f) for f in report.failures]
    failing = _failing(report)
    for section in _sections(report):
        for f in section.findings:
            if section.name == "integrity" and report.command == "check":
                level = "error"
            else:
                level = "error" if f in failing else "warning" if f.cls == "widening" else "notice"
            message = f"{f.subject}: {f.change}" + (f" ({f.detail})" if f.detail else "")
            out.append(_annotation(level, f"agentsurface {section.name}: {f.cls}", message))
    return out


def render_github(report: Report) -> str:
    return "\n".join(github_annotations(report)) + "\n" + render_md(report)


# ---------------------------------------------------------------- human (rich)


def _styled(text: str, style: str | None, color: bool) -> RenderableType:
    from rich.text import Text

    return Text(text, style=style or "") if color else Text(text)


def _table(rows: Iterable[Row], color: bool, detail: bool, origin: bool = False) -> RenderableType:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, highlight=False)
    for column in (*COLUMNS, "ORIGIN") if origin else COLUMNS:
        # Long ids and policy lists fold; the short words never turn into "destructi…".
        wraps = column in ("CAPABILITY", "POLICIES")
        table.add_column(column, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis")
    for row in rows:
        cap, kind, effect, reach, confirm, policies = cells(row)
        table.add_row(
            cap,
            kind,
            _styled(effect, EFFECT_STYLE.get(effect), color),
            _styled(reach, REACH_STYLE.get(reach), color),
            _styled(confirm, "bold" if confirm != NONE else None, color),
            policies,
            *((_styled(row.origin, "bold" if row.external else None, color),) if origin else ()),
        )
        if detail:
            note = row.description + (f"  [tags: {', '.join(row.tags)}]" if row.tags else "")
            table.add_row(_styled("  " + note, "dim", color), "", "", "", "", "", *(("",) if origin else ()))
    return table


def print_human(report: Report, console: Console, verbosity: Verbosity, color: bool) -> None:
    verdict = _styled(report.verdict.upper(), VERDICT_STYLE[report.verdict], color)
    from rich.text import Text

    console.print(Text.assemble(f"agentsurface {report.command}: ", verdict))  # type: ignore[arg-type]
    for problem in report.problems:
        console.print(f"  {problem.code}  {problem.where}: {problem.message}", markup=False, highlight=False)
    if report.problems:
        return
    console.print(headline_text(report), markup=False, highlight=False)
    if verbosity == "detail":
        console.print(
            f"contract {report.contract} · {report.manifest_hash} · {report.compiler}",
            markup=False,
            highlight=False,
        )
    if verbosity != "min" and report.rows and (report.command == "inspect" or verbosity == "detail"):
        console.print()
        origin = shows_origin(report)
        if verbosity == "detail":
            for declaration in sorted({r.declaration for r in report.rows}):
                console.print(_styled(declaration, "bold", color))
                chosen = [r for r in report.rows if r.declaration == declaration]
                console.print(_table(chosen, color, True, origin))
        else:
            console.print(_table(report.rows, color, False, origin))
    if (report.contributors or report.unused_approvals) and verbosity != "min":
        console.print()
        console.print("Installed distributions that contribute capabilities:", markup=False, highlight=False)
        for entry in contributor_lines(report):
            console.print(f"  {entry}", markup=False, highlight=False)
    for section in _sections(report):
        if section.name == "integrity" and section.status == "current" and verbosity != "detail":
            continue  # the headline already says so; drift rows appear only when there is drift
        console.print()
        console.print(
            f"{section_title(section, report)} — {counts_text(section)}", markup=False, highlight=False
        )
        if verbosity == "min":
            continue
        for f in section.findings:
            line = Text.assemble(
                "  ",
                _styled(f"{f.cls:<9}", CLASS_STYLE[f.cls], color),  # type: ignore[arg-type]
                f"  {f.subject}  {f.change}" + (f"  ({f.detail})" if f.detail else ""),
            )
            console.print(line)
    for failure in report.failures:
        console.print(_styled(f"failed: {failure}", "red", color))
    if verbosity != "min":
        console.print()
        console.print(_styled(CAVEAT, "dim", color))
