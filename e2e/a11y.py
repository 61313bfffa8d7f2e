"""Accessibility checks for e2e tests: axe-core run inside a Playwright page.

axe-core is vendored from npm (``web/package.json``) and copied by the runtime build to
``web/dist/testing/axe.min.js``. No page loads it in normal use: ``axe_violations`` injects it into
the page under test, runs it on the page as it is at that moment, and returns what it found.

    from a11y import axe_violations, describe_violations     # e2e/ is on sys.path in e2e tests

    violations = axe_violations(run.page)                       # serious and critical only
    assert not violations, describe_violations(violations)

    axe_violations(page, impacts=None)                          # every impact level
    axe_violations(page, include="dialog#confirm")              # only inside an element
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE_SCRIPT = Path(__file__).resolve().parent.parent / "web" / "dist" / "testing" / "axe.min.js"

# The rule sets axe reports against: WCAG 2.0/2.1/2.2 A and AA, plus axe's best practices
# (e.g. a scrollable region reachable with the keyboard).
DEFAULT_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice")

_RUN_AXE = """async ({include, tags}) => {
  const context = include === null ? document : {include: [include]};
  const results = await window.axe.run(context, {
    runOnly: {type: "tag", values: tags},
    resultTypes: ["violations"],
  });
  return results.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    helpUrl: v.helpUrl,
    nodes: v.nodes.map((n) => ({
      target: n.target.map(String),
      html: n.html,
      failureSummary: n.failureSummary || "",
      impact: n.impact,
    })),
  }));
}"""


def axe_violations(
    page: Page,
    impacts: Sequence[str] | None = ("serious", "critical"),
    *,
    include: str | None = None,
    tags: Sequence[str] = DEFAULT_TAGS,
) -> list[dict[str, Any]]:
    """Run axe-core on ``page`` and return its violations (as axe reports them: ``id``, ``impact``,
    ``help``, ``helpUrl`` and ``nodes`` with ``target``, ``html``, ``failureSummary``).

    - ``impacts``: keep only violations of these impact levels (``"minor"``, ``"moderate"``,
      ``"serious"``, ``"critical"``); ``None`` keeps all of them.
    - ``include``: a CSS selector to check only that part of the page (default: the document).
    - ``tags``: the axe rule tags to run (default: WCAG 2.x A/AA and best practices).

    axe is injected from ``web/dist/testing/axe.min.js`` (built by ``scripts/build_web.py``) the
    first time it is needed in a page; fails clearly when the build has not copied it.
    """
    if not AXE_SCRIPT.exists():
        raise FileNotFoundError(
            f"{AXE_SCRIPT.name} is not in web/dist/testing (run: python scripts/build_web.py)"
        )
    if not page.evaluate("() => typeof window.axe === 'object' && window.axe !== null"):
        page.add_script_tag(content=AXE_SCRIPT.read_text(encoding="utf-8"))
    violations: list[dict[str, Any]] = page.evaluate(_RUN_AXE, {"include": include, "tags": list(tags)})
    if impacts is not None:
        wanted = set(impacts)
        violations = [v for v in violations if v["impact"] in wanted]
    return violations


def describe_violations(violations: list[dict[str, Any]], max_nodes: int = 5) -> str:
    """A readable report of ``violations`` for an assertion message."""
    lines: list[str] = []
    for violation in violations:
        nodes = violation["nodes"]
        lines.append(
            f"{violation['id']} ({violation['impact']}, {len(nodes)} element(s)): {violation['help']}"
        )
        for node in nodes[:max_nodes]:
            summary = " ".join(node["failureSummary"].split())
            lines.append(f"    {' '.join(node['target'])}: {summary}")
        if len(nodes) > max_nodes:
            lines.append(f"    ... and {len(nodes) - max_nodes} more")
    return "\n".join(lines)
