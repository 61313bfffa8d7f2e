"""``agentsurface mcp --ready-timeout`` and what it says of a page without WebMCP (issue 43.5;
the waits themselves run in Chromium: e2e/test_mcp_ready.py)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from agentsurface.mcp_server.bridge import no_webmcp_message
from agentsurface.mcp_server.options import DEFAULT_READY_TIMEOUT, OptionsError, add_arguments, from_namespace

URL = "http://127.0.0.1:8000/index.html"
CDP = ("--cdp", "http://127.0.0.1:9222")


def _options(*argv: str) -> Any:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return from_namespace(parser.parse_args(list(argv)))


def test_the_ready_timeout_is_bounded() -> None:
    assert _options(URL, *CDP).ready_timeout == DEFAULT_READY_TIMEOUT
    assert _options(URL, *CDP, "--ready-timeout", "0").ready_timeout == 0
    assert _options(URL, *CDP, "--ready-timeout", "45").ready_timeout == 45
    for bad in ("-1", "601", "nan"):
        with pytest.raises(OptionsError, match="--ready-timeout"):
            _options(URL, *CDP, "--ready-timeout", bad)


def test_a_page_without_webmcp_is_told_the_flags() -> None:
    attached = no_webmcp_message(_options(URL, *CDP))
    assert attached.startswith(f"the page {URL} has loaded without WebMCP")
    assert "start the Chromium you attach to with --enable-features=WebMCP,WebMCPTesting" in attached
    assert "--polyfill" in attached
    polyfilled = no_webmcp_message(_options(URL, *CDP, "--polyfill"))
    assert "the injected polyfill did not take" in polyfilled
