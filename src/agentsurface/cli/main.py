"""Argument parsing and dispatch for the ``agentsurface`` command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, cast

from ..compiler.errors import CompileError
from .commands import SNAPSHOT_HINT, build_report, compile_at, write_snapshot
from .external import approval_text, consent_failure, contributors_of, select
from .render import Format, Verbosity, print_human, render_github, render_json, render_md
from .report import POLICIES, Policy, Report

FORMATS = {"human": "human", "json": "json", "md": "md", "markdown": "md", "github": "github"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentsurface", description="Review and gate what agents may do in your app."
    )
    parser.add_argument("--root", type=Path, default=None, help="app root (default: nearest pyproject.toml)")
    commands = parser.add_subparsers(dest="command", required=True)

    def report_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--base", metavar="REF", help="also compare with the contract committed at this git ref"
        )
        sub.add_argument("--format", choices=sorted(FORMATS), default="human")
        sub.add_argument(
            "--json", dest="format", action="store_const", const="json", help="same as --format json"
        )
        sub.add_argument("--verbosity", choices=("min", "normal", "detail"), default="normal")
        sub.add_argument("--detail", dest="verbosity", action="store_const", const="detail")
        sub.add_argument("--plain", action="store_true", help="no colour, even at a terminal")

    inspect = commands.add_parser("inspect", help="the capability inventory, integrity and drift")
    report_options(inspect)
    check = commands.add_parser("check", help="gate: integrity vs the committed contract, drift vs --base")
    report_options(check)
    check.add_argument(
        "--policy", choices=POLICIES, default="all", help="which drift findings fail (default all)"
    )
    snapshot = commands.add_parser(
        "snapshot", help="write the canonical contract (.agentsurface/contract.json)"
    )
    snapshot.add_argument(
        "--output", type=Path, help="where to write (default: the configured contract path)"
    )
    approve = commands.add_parser(
        "approve",
        help="print the pyproject.toml approval of capabilities contributed by installed distributions",
    )
    approve.add_argument(
        "distributions",
        nargs="*",
        metavar="DIST",
        help="distributions to approve as they are now (default: every one not approved)",
    )
    bundle = commands.add_parser(
        "bundle", help="write the app and the offline browser runtime to a static folder"
    )
    bundle.add_argument("--out", type=Path, required=True, help="output directory")
    bundle.add_argument(
        "--runtime",
        type=Path,
        help="an already built runtime directory (web/dist) to reuse instead of building",
    )
    bundle.add_argument(
        "--cache", type=Path, help="where the runtime is built (default: a user cache directory)"
    )
    bundle.add_argument("--offline", action="store_true", help="fail instead of downloading anything")
    precompile = commands.add_parser(
        "precompile",
        help="compile the Python files a page's data-files list, for a loader tag with data-compiled",
    )
    precompile.add_argument("pages", type=Path, nargs="+", metavar="PAGE", help="the HTML pages")
    precompile.add_argument(
        "--runtime",
        type=Path,
        help="a built runtime directory (web/dist); default: the one beside the agentsurface.js each page loads",
    )
    from ..mcp_server.options import add_arguments as mcp_arguments

    mcp_arguments(commands.add_parser("mcp", help="serve a page's WebMCP tools as MCP tools (extra [mcp])"))
    return parser


def _use_color(stream: TextIO, plain: bool) -> bool:
    if plain or os.environ.get("NO_COLOR") or os.environ.get("CI"):
        return False
    return stream.isatty()


def _root(given: Path | None) -> Path:
    from ..compiler.config import find_project_root

    return given.resolve() if given is not None else find_project_root(Path.cwd())


def emit(report: Report, fmt: Format, verbosity: Verbosity, plain: bool, out: TextIO) -> None:
    if fmt == "json":
        out.write(render_json(report))
    elif fmt == "md":
        out.write(render_md(report))
    elif fmt == "github":
        out.write(render_github(report))
    else:
        from rich.console import Console

        color = _use_color(out, plain)
        console = Console(
            file=out,
            force_terminal=color,
            no_color=not color,
            color_system="standard" if color else None,
            width=None if color else 120,
            highlight=False,
            emoji=False,
            soft_wrap=False,
        )
        print_human(report, console, verbosity, color)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out, err = sys.stdout, sys.stderr
    if args.command == "mcp":
        from ..mcp_server.main import serve_command

        return serve_command(args)
    if args.command == "precompile":
        return precompile(args.pages, args.runtime, out, err)
    try:
        root = _root(args.root)
        if args.command == "snapshot":
            path, changed, document = write_snapshot(root, args.output)
            shown = path.relative_to(root) if path.is_relative_to(root) else path
            print(f"{'wrote' if changed else 'unchanged'} {shown}", file=out)
            # Written either way (the contract records the missing consent, and the page refuses
            # those registrations), but a contract with unapproved contributors is not done.
            return 1 if _tell_approvals(document, err) else 0
        if args.command == "approve":
            return approve(root, args.distributions, out, err)
        if args.command == "bundle":
            from .bundle import BundleError, bundle

            try:
                bundle(root, args.out, runtime=args.runtime, cache=args.cache, offline=args.offline, log=err)
            except BundleError as exc:
                print(f"agentsurface bundle: {exc}", file=err)
                return 2
            return 0
    except CompileError as exc:
        print("agentsurface: the contract cannot be proven complete:", file=err)
        for problem in exc.problems:
            print(f"  {problem}", file=err)
        return 2
    policy = cast(Policy, getattr(args, "policy", "all"))
    report = build_report(args.command, root, args.base, policy)
    emit(report, cast(Format, FORMATS[args.format]), args.verbosity, args.plain, out)
    if report.integrity is not None and report.integrity.status != "current" and args.command == "check":
        print(
            f"agentsurface: the committed contract is {report.integrity.status}; run: {SNAPSHOT_HINT}",
            file=err,
        )
    if args.command == "check" and report.document is not None:
        _tell_approvals(report.document, err)
    return report.exit_code


def precompile(pages: list[Path], runtime: Path | None, out: TextIO, err: TextIO) -> int:
    from .._runtime_build.page_bytecode import precompile_page
    from .._runtime_build.precompile import PrecompileError

    try:
        for page in pages:
            written = precompile_page(page, runtime / "pyodide" if runtime is not None else None)
            print(f"{page}: {len(written)} module{'s' if len(written) != 1 else ''} compiled", file=out)
    except (PrecompileError, OSError) as exc:
        print(f"agentsurface precompile: {exc}", file=err)
        return 2
    return 0


def _tell_approvals(document: Mapping[str, Any], err: TextIO) -> bool:
    """Print each missing or outdated approval and what to paste; True if there was any."""
    pending = [c for c in contributors_of(document) if c.status != "approved"]
    for contributor in pending:
        print(f"agentsurface: {consent_failure(document, contributor)}", file=err)
    if pending:
        print("After reviewing them, approve by adding to pyproject.toml:\n", file=err)
        print("\n".join(approval_text(document, c) for c in pending), file=err)
    return bool(pending)


def approve(root: Path, names: list[str], out: TextIO, err: TextIO) -> int:
    """Print the approvals of ``names`` (or of every contributor not approved) as they are now."""
    document = compile_at(root).document
    contributors = contributors_of(document)
    chosen, unknown = select(contributors, names)
    if unknown:
        known = ", ".join(c.distribution for c in contributors) or "none"
        print(
            f"agentsurface approve: {', '.join(unknown)} contributes no capabilities to this app "
            f"(contributors: {known})",
            file=err,
        )
        return 2
    if not chosen:
        said = "is approved" if contributors else "(none does)"
        print(f"# every installed distribution that contributes capabilities {said}", file=out)
        return 0
    print("\n".join(approval_text(document, c) for c in chosen), end="", file=out)
    return 0
