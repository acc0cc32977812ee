"""URL roots: download an archive once into the cache, re-validate it, use it offline.

A URL is downloaded (httpx, timeouts, at most 5 redirects, size-capped) into
``<cache>/remote/<hash of URL>/``, extracted there by
:func:`skillshelf.skills.archive.extract_archive`,
re-validated with ``ETag``/``Last-Modified`` on later opens, and used from the cache when the
network is down. Certificates are always verified; ``$SKILLSHELF_CA_BUNDLE`` names a private CA.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.errors import MissingExtraError
from skillshelf.skills.archive import (
    ArchiveError,
    ArchiveLimits,
    Materialized,
    extract_archive,
    kind_of_url,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["materialize_url"]

# Network: a skills archive is small; a server that stalls this long is down for our purposes.
_CONNECT_TIMEOUT_S: Final = 10.0
_READ_TIMEOUT_S: Final = 30.0
_MAX_REDIRECTS: Final = 5
_CHUNK: Final = 1 << 16
_META: Final = "meta.json"


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def materialize_url(url: str, cache_dir: Path, limits: ArchiveLimits) -> Materialized:
    """Download (or re-validate) ``url`` and return its extracted tree.

    Raises:
        ArchiveError: It cannot be fetched (and no earlier copy can stand in) or extracted.
        MissingExtraError: httpx (the ``remote`` extra) is not installed.
    """
    folder = cache_dir / "remote" / _key(url)
    meta = _read_meta(folder)
    cached = folder / meta["tree"] if meta.get("tree") else None
    usable = cached if cached is not None and cached.is_dir() else None
    try:
        fetched = _download(url, folder, meta if usable else {}, limits)
    except ArchiveError as exc:
        if usable is None or exc.code != "remote.unreachable":
            raise
        note = Diagnostic(
            "remote.offline",
            "warning",
            f"{exc}; using the copy downloaded earlier",
            None,
            url,
        )
        return Materialized(str(usable), (note,))
    if fetched is None:  # 304 Not Modified
        assert usable is not None
        return Materialized(str(usable))
    download, headers = fetched
    try:
        digest = _file_digest(download)
        tree = folder / f"tree-{digest[:24]}"
        if not tree.is_dir():
            extract_archive(download, tree, limits=limits, name=url, kind=kind_of_url(url))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(download)
    _write_meta(folder, {"url": url, "tree": tree.name, **headers})
    for old in folder.glob("tree-*"):
        if old != tree:
            shutil.rmtree(old, ignore_errors=True)
    return Materialized(str(tree))


def _download(
    url: str, folder: Path, meta: dict[str, str], limits: ArchiveLimits
) -> tuple[Path, dict[str, str]] | None:
    """GET ``url`` conditionally into a temporary file; None when not modified."""
    try:
        import httpx
    except ImportError as exc:
        raise MissingExtraError("remote", module="httpx", feature="A URL root") from exc

    request_headers = {}
    if meta.get("etag"):
        request_headers["If-None-Match"] = meta["etag"]
    if meta.get("last_modified"):
        request_headers["If-Modified-Since"] = meta["last_modified"]
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        with (
            _client() as client,
            client.stream("GET", url, headers=request_headers) as response,
        ):
            if response.status_code == 304 and meta:
                return None
            if response.status_code != 200:
                raise ArchiveError(
                    "remote.http_error", f"Download failed: HTTP {response.status_code}"
                )
            download = _save_body(response, folder, limits)
            headers = {
                k: v
                for k, v in (
                    ("etag", response.headers.get("etag")),
                    ("last_modified", response.headers.get("last-modified")),
                )
                if v
            }
            return download, headers
    except httpx.TooManyRedirects:
        raise ArchiveError("remote.redirects", f"More than {_MAX_REDIRECTS} redirects") from None
    except (httpx.TransportError, OSError) as exc:
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            # Not "offline": a certificate that does not verify is never papered over with
            # the cached copy. A private CA goes in $SKILLSHELF_CA_BUNDLE.
            raise ArchiveError(
                "remote.tls", f"TLS certificate not trusted: {exc} (see SKILLSHELF_CA_BUNDLE)"
            ) from None
        raise ArchiveError("remote.unreachable", f"Cannot download: {exc}") from None


def _client() -> httpx.Client:
    import httpx

    # An explicit CA bundle (a private or test CA) is trusted besides the system's CAs;
    # there is deliberately no way to turn verification off.
    ca_bundle = os.environ.get("SKILLSHELF_CA_BUNDLE")
    verify: object = True
    if ca_bundle:
        import ssl

        context = ssl.create_default_context()
        context.load_verify_locations(cafile=ca_bundle)
        verify = context
    return httpx.Client(
        follow_redirects=True,
        max_redirects=_MAX_REDIRECTS,
        timeout=httpx.Timeout(_READ_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S),
        verify=verify,  # type: ignore[arg-type]
    )


def _save_body(response: httpx.Response, folder: Path, limits: ArchiveLimits) -> Path:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-")
    total = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            for chunk in response.iter_bytes(_CHUNK):
                total += len(chunk)
                if total > limits.max_total_bytes:
                    raise ArchiveError(
                        "remote.too_large",
                        f"Download is over {limits.max_total_bytes:,} bytes; stopped",
                    )
                fh.write(chunk)
    except BaseException:  # broad on purpose: no partial download survives, ^C too; re-raised
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


def _read_meta(folder: Path) -> dict[str, str]:
    try:
        data = json.loads((folder / _META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}


def _write_meta(folder: Path, meta: dict[str, str]) -> None:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".meta-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(meta, fh)
    os.replace(tmp, folder / _META)


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
