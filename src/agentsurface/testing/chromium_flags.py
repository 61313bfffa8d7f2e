"""Chromium switches that a Pyodide page needs to run reliably, and how to add features to an
argument list without losing any (Chromium reads only the last ``--enable-features=`` and the last
``--disable-features=`` it is given).

Why three features are off: Chromium has two samplers that record a stack for some allocations by
walking frame pointers, its sampling heap profiler (``HeapProfilerReporting``) and GWP-ASan, which
guards a sample of allocations to catch memory errors (``GwpAsanMalloc``,
``GwpAsanPartitionAlloc``). Pyodide runs Python on WebAssembly stacks of their own (JS Promise
Integration), and the walk runs past the end of such a stack: the renderer dies with SIGSEGV (the
person sees "Aw, Snap!", Playwright says "Target crashed"). A build without an official channel,
such as Debian's, turns the heap profiler on in half its launches and then in one renderer in ten,
and GWP-ASan in a few renderers too, so a test suite that opens many Pyodide pages loses one now
and then. Both crash at the same instruction. Turning the three features off removes the samplers
and the crashes with them (the project's ``e2e/test_chromium_crashes.py`` makes each sampler crash
a page, and shows the switch ends it). Neither changes what a page does: both exist to report on
Chromium itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["PYODIDE_DISABLED_FEATURES", "with_features"]

# The frame-pointer samplers that crash Pyodide renderers (see the module docstring).
PYODIDE_DISABLED_FEATURES: tuple[str, ...] = ("HeapProfilerReporting", "GwpAsanMalloc", "GwpAsanPartitionAlloc")


def with_features(
    args: Sequence[str], *, enable: Iterable[str] = (), disable: Iterable[str] = PYODIDE_DISABLED_FEATURES
) -> list[str]:
    """``args`` with ``enable`` added to its ``--enable-features=`` and ``disable`` to its
    ``--disable-features=`` (each merged into the last one given, or appended). A feature the
    caller enables explicitly is not disabled."""
    out = list(args)
    wanted_on = _merge(out, "--enable-features=", [f for item in enable for f in item.split(",") if f])
    _merge(out, "--disable-features=", [name for name in disable if name not in wanted_on])
    return out


def _merge(args: list[str], prefix: str, names: list[str]) -> set[str]:
    """Adds ``names`` to the last ``prefix`` switch in ``args``; returns the switch's features."""
    index = next((i for i in range(len(args) - 1, -1, -1) if args[i].startswith(prefix)), None)
    present = [] if index is None else [f for f in args[index][len(prefix):].split(",") if f]
    names = [name for name in names if name not in present and name.split(":", 1)[0] not in _bare(present)]
    merged = present + names
    if index is not None:
        args[index] = prefix + ",".join(merged)
    elif merged:
        args.append(prefix + ",".join(merged))
    return _bare(merged)


def _bare(features: Iterable[str]) -> set[str]:
    """Feature names without their ``:param/value`` part or a ``<trial`` suffix."""
    return {f.split(":", 1)[0].split("<", 1)[0] for f in features}
