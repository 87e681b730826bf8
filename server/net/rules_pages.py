"""Each rule set's rules as a page for people: ``GET /rules/<rule_set>``.

The page is ``docs/rules/<rule_set>.md``, the rules the engine and its tests follow rule by
rule, rendered by markdown-it-py (CommonMark, plus tables) with raw HTML off: whatever the text
holds is shown as text, never run as markup, and link targets such as ``javascript:`` are not
made links. Only the names of the rule set registry are pages; anything else is unknown (404).
Each page is rendered once and kept: the files change only with a new release.
"""

from __future__ import annotations

from functools import cache
from html import escape
from pathlib import Path

from markdown_it import MarkdownIt
from websockets.datastructures import Headers
from websockets.http11 import Response

from engine.registry import RULE_SET_NAMES, find_rule_set

RULES_ROOT = Path(__file__).resolve().parents[2] / "docs" / "rules"
STYLE = """body{font:16px/1.5 system-ui,sans-serif;max-width:46em;margin:1em auto;padding:0 1em;
color:#222;background:#fdfdf8}code{background:#eee;padding:0 .2em}table{border-collapse:collapse}
td,th{border:1px solid #bbb;padding:.2em .5em}nav{margin-bottom:1em}"""
CONTENT_SECURITY = "default-src 'none'; style-src 'unsafe-inline'"
"""The page runs nothing and loads nothing: only its own inline style."""


def rules_url(rule_set: str) -> str:
    return f"/rules/{rule_set}"


def page(title: str, markdown: str) -> str:
    """A Markdown text as a page of its own, markup in the text shown as text."""
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    return (
        f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>\n"
        f'<body><nav><a href="/">Back to the game</a></nav>\n{body}</body></html>\n'
    )


@cache
def rules_html(rule_set: str) -> bytes | None:
    """The rule set's rules page, or None if there is no such rule set."""
    if rule_set not in RULE_SET_NAMES:
        return None
    text = (RULES_ROOT / f"{rule_set}.md").read_text(encoding="utf-8")
    return page(f"{find_rule_set(rule_set).title}: the rules", text).encode()


def rules_response(rule_set: str) -> Response | None:
    """The rules page as an HTTP response, or None (the caller answers 404)."""
    data = rules_html(rule_set)
    if data is None:
        return None
    headers = Headers(
        [
            ("Content-Type", "text/html; charset=utf-8"),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-cache"),
            ("Content-Security-Policy", CONTENT_SECURITY),
        ]
    )
    return Response(200, "OK", headers, data)
