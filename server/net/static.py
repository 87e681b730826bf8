"""The browser client's files (``clients/web/``), served as they are: no build step.

``/`` is ``index.html``; any other path names a file under the web directory. Only files of the
types below are served, and a path that would leave the directory (``..``, an absolute path, a
symbolic link pointing out) or names a hidden file is treated as unknown.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote

from websockets.datastructures import Headers
from websockets.http11 import Response

WEB_ROOT = Path(__file__).resolve().parents[2] / "clients" / "web"

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
}


def web_file(url_path: str, root: Path = WEB_ROOT) -> Path | None:
    """The file a URL path names under ``root``, or None if there is no such servable file."""
    relative = unquote(url_path).lstrip("/") or "index.html"
    parts = relative.split("/")
    if any(not part or part.startswith(".") or "\\" in part or "\x00" in part for part in parts):
        return None
    candidate = (root / relative).resolve()
    if not candidate.is_relative_to(root.resolve()) or not candidate.is_file():
        return None
    return candidate if candidate.suffix in CONTENT_TYPES else None


def static_response(url_path: str, root: Path = WEB_ROOT) -> Response | None:
    """The file as an HTTP response, or None (the caller answers 404)."""
    file = web_file(url_path, root)
    if file is None:
        return None
    data = file.read_bytes()
    headers = Headers(
        [
            ("Content-Type", CONTENT_TYPES[file.suffix]),
            ("Content-Length", str(len(data))),
            ("Cache-Control", "no-cache"),
        ]
    )
    return Response(200, "OK", headers, data)
