"""Chromium keeps only the last --enable-features / --disable-features switch: every feature the
caller gave must survive the merge, and the samplers that crash Pyodide renderers are off."""

from __future__ import annotations

import pytest

from agentsurface.testing.chromium_flags import PYODIDE_DISABLED_FEATURES, with_features

OFF = "--disable-features=HeapProfilerReporting,GwpAsanMalloc,GwpAsanPartitionAlloc"


def test_nothing_given_turns_the_samplers_off() -> None:
    assert PYODIDE_DISABLED_FEATURES == ("HeapProfilerReporting", "GwpAsanMalloc", "GwpAsanPartitionAlloc")
    assert with_features([]) == [OFF]
    assert with_features(["--headless"], enable=["WebMCPTesting"]) == [
        "--headless",
        "--enable-features=WebMCPTesting",
        OFF,
    ]


def test_features_merge_into_the_last_switch_of_each_kind() -> None:
    args = ["--enable-features=A", "--disable-features=B", "--mute-audio", "--enable-features=C"]
    assert with_features(args, enable=["WebMCP", "WebMCPTesting"]) == [
        "--enable-features=A",
        "--disable-features=B,HeapProfilerReporting,GwpAsanMalloc,GwpAsanPartitionAlloc",
        "--mute-audio",
        "--enable-features=C,WebMCP,WebMCPTesting",
    ]


def test_merging_twice_changes_nothing_and_the_input_is_not_modified() -> None:
    args = ["--enable-features=Foo"]
    once = with_features(args, enable=["WebMCPTesting"])
    assert args == ["--enable-features=Foo"]
    assert with_features(once, enable=["WebMCPTesting"]) == once


@pytest.mark.parametrize(
    "enabled",
    ["HeapProfilerReporting", "HeapProfilerReporting:renderer-prob-pct/100", "HeapProfilerReporting<Trial"],
)
def test_a_feature_the_caller_enables_is_not_disabled(enabled: str) -> None:
    """Someone who turns the profiler on (e.g. the repro script) keeps it on, with its params."""
    assert with_features([f"--enable-features={enabled}"]) == [
        f"--enable-features={enabled}",
        "--disable-features=GwpAsanMalloc,GwpAsanPartitionAlloc",
    ]


def test_a_feature_already_listed_with_params_is_not_added_again() -> None:
    assert with_features(["--enable-features=WebMCPTesting:x/1"], enable=["WebMCPTesting"]) == [
        "--enable-features=WebMCPTesting:x/1",
        OFF,
    ]


def test_features_given_as_one_comma_list_count_one_by_one() -> None:
    """``enable=["A:x/1,GwpAsanPartitionAlloc:y/2"]`` enables both, so neither is disabled."""
    args = with_features([], enable=["GwpAsanMalloc:p/1,GwpAsanPartitionAlloc:p/1"])
    assert args == [
        "--enable-features=GwpAsanMalloc:p/1,GwpAsanPartitionAlloc:p/1",
        "--disable-features=HeapProfilerReporting",
    ]
