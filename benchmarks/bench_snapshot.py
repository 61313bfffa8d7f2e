"""A Pyodide memory snapshot tried on the current Pyodide, printed as first-tool figures.

    .venv/bin/python benchmarks/bench_snapshot.py [--rounds 5]

Makes a snapshot in Chromium (pages/snapshot-make.html: ``loadPyodide({_makeSnapshot: true})``,
agentsurface imported from its zip, ``makeMemorySnapshot()``), then times navigation -> first
tool of the type-hinted page booted from it (pages/snapshot-boot.html: ``_loadSnapshot``, the
snapshot written to pages/snapshot.bin for the run, fetched beside the runtime) next to the
same page through our loader (pages/typed.html) and a bare ``loadPyodide`` (pages/bare.html),
cold and warm (bench_browser's ``cold_then_warm``: a second visit on the same profile, the first
left open a few seconds), medians of ``--rounds`` with every round printed. An experiment: the
loader does not use snapshots. Needs web/dist and Debian's chromium. Never asserts a timing.
"""

from __future__ import annotations

import argparse
import base64
import statistics
import sys
from pathlib import Path

from playwright.sync_api import Playwright, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_browser import WEBMCP, _runs, browser, check_tools_listed, cold_then_warm, visit  # noqa: E402
from scripts.serve import start_server  # noqa: E402

SNAPSHOT_FILE = ROOT / "benchmarks" / "pages" / "snapshot.bin"
TO_BASE64 = """async () => {
  const blob = new Blob([window.snapshot.bytes]);
  const url = await new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.readAsDataURL(blob);
  });
  return url.slice(url.indexOf(",") + 1);
}"""


def make_snapshot(pw: Playwright, base: str) -> bytes:
    with browser(pw, WEBMCP) as context:
        page, _ = visit(context, f"{base}/benchmarks/pages/snapshot-make.html", "window.snapshotReadyMs")
        page.wait_for_function("() => window.snapshotReady === true", timeout=180_000)
        return base64.b64decode(page.evaluate(TO_BASE64))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server, base = start_server(ROOT, port=0, quiet=True)
    try:
        with sync_playwright() as pw:
            snapshot = make_snapshot(pw, base)
            print(
                f"snapshot: {len(snapshot) / 1e6:.1f} MB (agentsurface imported; the typed page's script not run)"
            )
            SNAPSHOT_FILE.write_bytes(snapshot)  # served beside the page (HTTP cache and all), removed after

            pages = {
                "bare": (f"{base}/benchmarks/pages/bare.html", "window.bareReadyMs"),
                "loader": (f"{base}/benchmarks/pages/typed.html", "window.firstToolMs"),
                "snapshot": (f"{base}/benchmarks/pages/snapshot-boot.html", "window.firstToolMs"),
            }
            runs: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.rounds):
                for kind, (url, ready) in pages.items():
                    for visit_kind, page, ms in cold_then_warm(pw, url, ready):
                        if kind != "bare":
                            check_tools_listed(page)
                        runs.setdefault((kind, visit_kind), []).append(ms)
            print(f"navigation -> ready, ms, median of {args.rounds} rounds (all rounds in brackets)")
            for visit_kind in ("cold", "warm"):
                bare = runs[("bare", visit_kind)]
                print(
                    f"  {visit_kind}: bare loadPyodide                 {statistics.median(bare):7.0f} {_runs(bare)}"
                )
                for kind, label in (
                    ("loader", "typed page, our loader    "),
                    ("snapshot", "typed page, from snapshot"),
                ):
                    ours = runs[(kind, visit_kind)]
                    paired = statistics.median(o / b for o, b in zip(ours, bare, strict=True))
                    print(
                        f"  {visit_kind}: {label}     {statistics.median(ours):7.0f} {_runs(ours)}"
                        f"   /bare {statistics.median(ours) / statistics.median(bare):.2f}"
                        f" (per-round {paired:.2f})"
                    )
    finally:
        SNAPSHOT_FILE.unlink(missing_ok=True)
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    main()
