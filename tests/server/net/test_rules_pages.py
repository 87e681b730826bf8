"""Each rule set's rules as a page (``server.net.rules_pages``): rendered, escaped, and served."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request

import pytest

from engine.registry import RULE_SET_NAMES
from server.net.rules_pages import page, rules_html
from tests.server.test_server import Server


def test_markup_in_the_text_is_shown_as_text_and_no_script_link_is_made() -> None:
    html = page(
        "<b>Title</b>",
        "# Rules <script>alert(1)</script>\n\n"
        "[click](javascript:alert(2)) and <img src=x onerror=alert(3)>\n\n"
        "| a | b |\n| --- | --- |\n| `x<y` | **z** |\n",
    )
    assert "<script>" not in html and "<img" not in html and "<b>Title" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript:' not in html
    assert "<table>" in html and "<code>x&lt;y</code>" in html and "<strong>z</strong>" in html


@pytest.mark.parametrize("rule_set", RULE_SET_NAMES)
def test_every_rule_set_has_its_page(rule_set: str) -> None:
    html = rules_html(rule_set)
    assert html is not None and b"<h1>" in html and b"<h2>" in html


def test_only_the_rule_sets_are_pages() -> None:
    assert rules_html("../README") is None and rules_html("nope") is None


async def test_the_server_serves_the_pages_and_lists_them_with_the_games(server: Server) -> None:
    def fetch(path: str) -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(server.http + path) as response:
                return response.status, response.headers["Content-Type"], response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers["Content-Type"], error.read()

    status, kind, body = await asyncio.to_thread(fetch, "/rules/octagon")
    assert status == 200 and kind == "text/html; charset=utf-8"
    assert b"The Octagon" in body and b"<table>" in body
    for unknown in ("/rules/nope", "/rules/..%2FREADME", "/rules/"):
        assert (await asyncio.to_thread(fetch, unknown))[0] == 404
    _, games = await server.http_get("/api/games")
    assert {game["name"]: game["rules_url"] for game in games} == {
        name: f"/rules/{name}" for name in RULE_SET_NAMES
    }
