"""`agentsurface bundle` checks the pages it copies: a page that loads the runtime from a path
the bundle does not produce fails the bundle, naming the page and the `src` to write."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentsurface.cli import main
from agentsurface.cli.page_check import wrong_references
from tests.fixtures import copy_shop, edit

PAGE = """<!doctype html><html><head>
<script type="text/x-agentsurface" src="app.py"></script>
<script type="module" src="{src}" data-packages="shop-app"></script>
<link rel="stylesheet" href="{css}">
</head><body></body></html>"""


@pytest.mark.parametrize(
    ("page", "src", "expected"),
    [
        ("index.html", "web/agentsurface.js", "agentsurface.js"),
        ("index.html", "../web/agentsurface.js", "agentsurface.js"),
        ("pages/board.html", "agentsurface.js", "../agentsurface.js"),
        ("pages/board.html", "/web/agentsurface.js", "../agentsurface.js"),
    ],
)
def test_a_wrong_runtime_path_is_named_with_the_src_to_write(page: str, src: str, expected: str) -> None:
    (problem,) = wrong_references(page, PAGE.format(src=src, css="https://example.org/x.css"))
    assert problem.written == src and problem.expected == expected
    assert str(problem) == (
        f"{page} loads {src!r} (<script src>), which the bundle does not produce: write src=\"{expected}\""
    )


@pytest.mark.parametrize(
    ("page", "src", "css"),
    [
        ("index.html", "agentsurface.js", "dist/pyscript/core.css"),
        ("index.html", "./agentsurface.js?v=1", "style.css"),
        ("index.html", "/agentsurface.js", "/dist/pyscript/core.css"),
        ("pages/board.html", "../agentsurface.js", "../dist/pyscript/core.css"),
        ("index.html", "https://cdn.example.org/agentsurface.js", "x.css"),
    ],
)
def test_references_the_bundle_produces_pass(page: str, src: str, css: str) -> None:
    assert wrong_references(page, PAGE.format(src=src, css=css)) == []


def test_runtime_files_are_checked_too() -> None:
    (problem,) = wrong_references("index.html", PAGE.format(src="agentsurface.js", css="web/dist/pyscript/core.css"))
    assert (problem.tag, problem.attribute, problem.expected) == ("link", "href", "dist/pyscript/core.css")


def test_bundle_fails_before_building_naming_the_page_and_the_right_src(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app = copy_shop(tmp_path / "app")
    edit(app / "index.html", 'src="agentsurface.js"', 'src="web/agentsurface.js"')
    assert main(["--root", str(app), "snapshot"]) == 0
    out = tmp_path / "site"
    # --runtime points nowhere: the page check fails first, before any runtime work.
    code = main(["--root", str(app), "bundle", "--out", str(out), "--runtime", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert code == 2
    assert "index.html loads 'web/agentsurface.js'" in err
    assert 'write src="agentsurface.js"' in err
    assert not out.exists()


def test_a_page_without_the_apps_package_gets_a_warning() -> None:
    from agentsurface.cli.page_check import missing_app_package

    page = '<script type="module" src="agentsurface.js"{extra}></script>'
    assert missing_app_package("index.html", page.format(extra=' data-packages="shop_app jsonschema"'), "shop-app") is None
    warning = missing_app_package("index.html", page.format(extra=""), "shop-app")
    assert warning == (
        'warning: index.html loads agentsurface.js without data-packages="shop-app": its scripts '
        "cannot import the app's packages nor authority_from_bundle() its contract"
    )
    assert missing_app_package("about.html", "<p>no runtime here</p>", "shop-app") is None
