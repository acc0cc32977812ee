"""The one MIME table: a file name (and, when known, its first bytes) → a MIME type.

Every face that names a type — ``skill_read_file``, the MCP resource list and reads,
``workspace_exec``'s collected files — asks :func:`guess_mime`, so a file has one type
everywhere. The table is this module's own, not :mod:`mimetypes`: that module reads the
machine's ``/etc/mime.types`` (which maps ``.ts`` to ``video/mp2t``) and its built-in table
changes between Python versions, so a file would get a different type on another machine.
Pure: names and bytes in, strings out.
"""

from __future__ import annotations

from typing import Final

__all__ = ["OCTET_STREAM", "SNIFF_BYTES", "guess_mime", "is_binary"]

OCTET_STREAM: Final = "application/octet-stream"
# How much of a file's start decides "text or binary" for a name the table does not know.
SNIFF_BYTES: Final = 8192

_TEXT: Final = {
    "txt": "text/plain", "text": "text/plain", "log": "text/plain", "ini": "text/plain",
    "cfg": "text/plain", "conf": "text/plain", "env": "text/plain", "j2": "text/plain",
    "md": "text/markdown", "markdown": "text/markdown", "mdx": "text/markdown",
    "rst": "text/x-rst", "csv": "text/csv", "tsv": "text/tab-separated-values",
    "html": "text/html", "htm": "text/html", "css": "text/css", "xml": "text/xml",
    "xsl": "application/xml", "xsd": "application/xml",
    "js": "text/javascript", "mjs": "text/javascript", "cjs": "text/javascript",
    "jsx": "text/jsx", "ts": "text/typescript", "tsx": "text/tsx", "mts": "text/typescript",
    "py": "text/x-python", "pyi": "text/x-python", "sh": "application/x-sh",
    "bash": "application/x-sh", "zsh": "application/x-sh", "ps1": "text/plain",
    "rb": "text/x-ruby", "pl": "text/x-perl", "lua": "text/x-lua", "go": "text/x-go",
    "rs": "text/x-rust", "java": "text/x-java", "c": "text/x-c", "h": "text/x-c",
    "cpp": "text/x-c++", "hpp": "text/x-c++", "sql": "application/sql",
    "json": "application/json", "jsonl": "application/jsonl",
    "ipynb": "application/x-ipynb+json", "yaml": "application/yaml",
    "yml": "application/yaml", "toml": "application/toml", "svg": "image/svg+xml",
}  # fmt: skip
_BINARY: Final = {
    "pdf": "application/pdf", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
    "gif": "image/gif", "webp": "image/webp", "bmp": "image/bmp", "tif": "image/tiff",
    "tiff": "image/tiff", "ico": "image/vnd.microsoft.icon", "mp3": "audio/mpeg",
    "wav": "audio/wav", "ogg": "audio/ogg", "mp4": "video/mp4", "webm": "video/webm",
    "ttf": "font/ttf", "otf": "font/otf", "woff": "font/woff", "woff2": "font/woff2",
    "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip",
    "bz2": "application/x-bzip2", "xz": "application/x-xz", "tar": "application/x-tar",
    "7z": "application/x-7z-compressed", "wasm": "application/wasm",
    "jar": "application/java-archive", "whl": "application/zip",
    "doc": "application/msword", "xls": "application/vnd.ms-excel",
    "ppt": "application/vnd.ms-powerpoint",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odt": "application/vnd.oasis.opendocument.text", "exe": OCTET_STREAM,
    "so": OCTET_STREAM, "dylib": OCTET_STREAM, "bin": OCTET_STREAM, "pyc": OCTET_STREAM,
}  # fmt: skip
_BINARY_TYPES: Final = frozenset(_BINARY.values())


def guess_mime(name: str, head: bytes | None = None) -> str:
    """The MIME type of a file called ``name`` (a bare name or a ``/``-separated path).

    Known suffixes (case-insensitive) answer from the table. For any other name the first
    bytes decide when given: ``text/plain`` without a NUL in the first :data:`SNIFF_BYTES`,
    else ``application/octet-stream``; without ``head`` the answer is
    ``application/octet-stream``.
    """
    suffix = _suffix(name)
    known = _TEXT.get(suffix) or _BINARY.get(suffix)
    if known is not None:
        return known
    if head is None or b"\x00" in head[:SNIFF_BYTES]:
        return OCTET_STREAM
    return "text/plain"


def is_binary(mime: str, head: bytes = b"") -> bool:
    """Whether content of type ``mime`` starting with ``head`` is shown as bytes, not text.

    A NUL in the first bytes makes any file binary (a ``.txt`` that is really a blob);
    otherwise the type decides.
    """
    if b"\x00" in head[:SNIFF_BYTES]:
        return True
    if mime.endswith(("+xml", "+json")):  # image/svg+xml and friends are text
        return False
    return mime in _BINARY_TYPES or mime.startswith(("image/", "audio/", "video/", "font/"))


def _suffix(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    stem, dot, suffix = base.rpartition(".")
    return suffix.lower() if dot and stem.strip(".") else ""
