"""The bridge's URL path encoding is urllib.parse.quote(text, safe="") exactly, without importing
urllib.parse (a page compiles it, and ipaddress with it, from source)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentsurface.bridge.wire import call_url, challenge_url, quote_segment


@given(st.text())
def test_quote_segment_is_urllib_quote_with_nothing_safe(text: str) -> None:
    try:
        expected = quote(text, safe="")
    except UnicodeEncodeError:  # a lone surrogate: both refuse it
        with pytest.raises(UnicodeEncodeError):
            quote_segment(text)
        return
    assert quote_segment(text) == expected


@pytest.mark.parametrize(
    ("text", "encoded"),
    [
        ("devices.disable", "devices.disable"),
        ("a/b?c=%d", "a%2Fb%3Fc%3D%25d"),
        ("über ~x_-", "%C3%BCber%20~x_-"),
        ("", ""),
    ],
)
def test_quote_segment_examples(text: str, encoded: str) -> None:
    assert quote_segment(text) == encoded


def test_urls_encode_the_whole_procedure_path() -> None:
    assert call_url("https://x.test/api/", "domain:a/b c") == "https://x.test/api/procedures/a%2Fb%20c"
    assert challenge_url("https://x.test/api", "domain:a?b").endswith("/a%3Fb")
