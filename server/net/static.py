"""The browser client's files (``clients/web/``), served as they are (no build step), compressed
and cacheable.

``/`` is ``index.html``; any other path names a file under the web directory. Only files of the
types below are served, and a path that would leave the directory (``..``, an absolute path, a
symbolic link pointing out) or names a hidden file is treated as unknown.

Each file is read, hashed and (text) gzipped once, and again only when it changes on disk
(``Prepared``). A browser that accepts gzip gets the gzipped bytes. Every answer has a strong
``ETag`` made from the content's SHA-256 (the gzipped one its own) and ``Cache-Control:
no-cache``: the browser keeps the file and asks each time whether it changed, and a request with
that ``If-None-Match`` gets ``304`` with no body. Not ``immutable`` URLs with the hash in the
name: the files are ES modules importing each other by name, so that would need a build step
to rewrite every import, and a page load then costs one small round trip per file instead
(README, "The browser client").
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
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


COMPRESSED = frozenset({".html", ".js", ".css", ".svg"})
"""The types worth gzipping (images are compressed already)."""


@dataclass(frozen=True, slots=True)
class Prepared:
    """A file as served: its bytes, and gzipped if that is smaller, each with its ETag."""

    changed: tuple[int, int]
    """The file's modification time (ns) and size when it was read: read again if either
    differs."""
    data: bytes
    etag: str
    gzipped: bytes | None
    gzipped_etag: str

    @classmethod
    def read(cls, file: Path) -> Prepared:
        stat = file.stat()
        data = file.read_bytes()
        tag = hashlib.sha256(data).hexdigest()[:32]
        gzipped = gzip.compress(data, mtime=0) if file.suffix in COMPRESSED else None
        return cls(
            (stat.st_mtime_ns, stat.st_size),
            data,
            f'"{tag}"',
            gzipped if gzipped is not None and len(gzipped) < len(data) else None,
            f'"{tag}-gzip"',
        )


_prepared: dict[Path, Prepared] = {}


def prepared(file: Path) -> Prepared:
    """The file as served, read once and again only when it has changed."""
    stat = file.stat()
    known = _prepared.get(file)
    if known is None or known.changed != (stat.st_mtime_ns, stat.st_size):
        known = _prepared[file] = Prepared.read(file)
    return known


def accepts_gzip(accept_encoding: str | None) -> bool:
    """Whether ``Accept-Encoding`` takes gzip (``gzip``, ``gzip;q=0.5``; not ``gzip;q=0``)."""
    for coding in (accept_encoding or "").split(","):
        name, _, quality = coding.partition(";")
        if name.strip().lower() == "gzip":
            return quality.replace(" ", "").lower() not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def static_response(
    url_path: str, request: Headers | None = None, root: Path = WEB_ROOT
) -> Response | None:
    """The file as an HTTP response (gzipped if the request accepts it; ``304`` if the
    request's ``If-None-Match`` names what it would get), or None (the caller answers 404)."""
    file = web_file(url_path, root)
    if file is None:
        return None
    served = prepared(file)
    request = request or Headers()
    if served.gzipped is not None and accepts_gzip(request.get("Accept-Encoding")):
        data, etag, encoding = served.gzipped, served.gzipped_etag, "gzip"
    else:
        data, etag, encoding = served.data, served.etag, None
    headers = Headers(
        [
            ("Content-Type", CONTENT_TYPES[file.suffix]),
            ("ETag", etag),
            ("Cache-Control", "no-cache"),
            ("Vary", "Accept-Encoding"),
        ]
    )
    wanted = [tag.strip() for tag in request.get("If-None-Match", "").split(",")]
    if etag in wanted or "*" in wanted:
        return Response(304, "Not Modified", headers, b"")
    if encoding is not None:
        headers["Content-Encoding"] = encoding
    headers["Content-Length"] = str(len(data))
    return Response(200, "OK", headers, data)
