"""URL roots: download an archive once into the cache, re-validate it, use it offline.

A URL is downloaded (httpx, timeouts, at most 5 redirects, size-capped, within an overall
deadline) into
``<cache>/remote/<hash of URL>/``, extracted there by
:func:`skillshelf.skills.archive.extract_archive`,
re-validated with ``ETag``/``Last-Modified`` on later opens, and used from the cache when the
network is down. Certificates are always verified; ``$SKILLSHELF_CA_BUNDLE`` names a private CA.
Redirects are followed by hand so that an ``https://`` root never continues over ``http://``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final, TypeVar

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.errors import MissingExtraError
from skillshelf.skills.archive import (
    ArchiveError,
    ArchiveLimits,
    Materialized,
    extract_archive,
    kind_of_url,
)
from skillshelf.skills.cache_files import CACHE_FIX, private_tree, read_cache_file, write_cache_file

if TYPE_CHECKING:
    import httpx

__all__ = ["materialize_url"]

# Network: a skills archive is small; a server that stalls this long is down for our purposes.
_CONNECT_TIMEOUT_S: Final = 10.0
_READ_TIMEOUT_S: Final = 30.0
_MAX_REDIRECTS: Final = 5
_REDIRECT_STATUSES: Final = frozenset({301, 302, 303, 307, 308})
# When the server is too slow, the copy downloaded earlier still stands in (as when offline).
_FALLBACK_CODES: Final = frozenset({"remote.unreachable", "remote.deadline"})
_CHUNK: Final = 1 << 16
_META: Final = "meta.json"
# The extracted tree's folder name, as written below: a name from the cache is used only then.
_TREE_NAME: Final = re.compile(r"tree-[0-9a-f]{24}")
logger = logging.getLogger("skillshelf.cache")


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def materialize_url(url: str, cache_dir: Path, limits: ArchiveLimits) -> Materialized:
    """Download (or re-validate) ``url`` and return its extracted tree.

    Raises:
        ArchiveError: It cannot be fetched (and no earlier copy can stand in) or extracted.
        MissingExtraError: httpx (the ``remote`` extra) is not installed.
    """
    refused = private_tree(cache_dir, "remote", _key(url))
    if refused is not None:
        raise ArchiveError("cache.not_private", f"{refused}; {CACHE_FIX}")
    folder = cache_dir / "remote" / _key(url)
    meta = _read_meta(folder)
    cached = folder / meta["tree"] if meta.get("tree") else None
    usable = cached if cached is not None and cached.is_dir() else None
    try:
        fetched = _download(url, folder, meta if usable else {}, limits)
    except ArchiveError as exc:
        if usable is None or exc.code not in _FALLBACK_CODES:
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
    """GET ``url`` conditionally into a temporary file; None when not modified.

    The whole exchange (connect, TLS, redirects, headers, body) runs under one deadline:
    per-read timeouts alone never stop a server that sends a byte every few seconds.
    """
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
    deadline = limits.download_deadline_s

    async def fetch() -> tuple[Path, dict[str, str]] | None:
        import anyio

        try:
            with anyio.fail_after(deadline):
                return await _fetch(url, folder, request_headers, bool(meta), limits)
        except TimeoutError:
            raise ArchiveError(
                "remote.deadline",
                f"Download did not finish within {deadline:g} s (the limit, "
                "ArchiveLimits.download_deadline_s); stopped",
            ) from None

    try:
        return _run_in_own_loop(fetch)
    except (httpx.TransportError, OSError) as exc:
        if "CERTIFICATE_VERIFY_FAILED" in str(exc):
            # Not "offline": a certificate that does not verify is never papered over with
            # the cached copy. A private CA goes in $SKILLSHELF_CA_BUNDLE.
            raise ArchiveError(
                "remote.tls", f"TLS certificate not trusted: {exc} (see SKILLSHELF_CA_BUNDLE)"
            ) from None
        raise ArchiveError("remote.unreachable", f"Cannot download: {exc}") from None


async def _fetch(
    url: str, folder: Path, headers: dict[str, str], conditional: bool, limits: ArchiveLimits
) -> tuple[Path, dict[str, str]] | None:
    async with _client() as client:
        current = url
        for _hop in range(_MAX_REDIRECTS + 1):
            async with client.stream("GET", current, headers=headers) as response:
                if response.status_code in _REDIRECT_STATUSES:
                    current = _redirect_target(current, response)
                    continue
                if response.status_code == 304 and conditional:
                    return None
                if response.status_code != 200:
                    raise ArchiveError(
                        "remote.http_error", f"Download failed: HTTP {response.status_code}"
                    )
                download = await _save_body(response, folder, limits)
                kept = {
                    k: v
                    for k, v in (
                        ("etag", response.headers.get("etag")),
                        ("last_modified", response.headers.get("last-modified")),
                    )
                    if v
                }
                return download, kept
    raise ArchiveError("remote.redirects", f"More than {_MAX_REDIRECTS} redirects")


def _redirect_target(current: str, response: httpx.Response) -> str:
    """Where a redirect leads; refused when it leaves http(s) or drops https for http."""
    location = response.headers.get("location")
    if not location:
        raise ArchiveError(
            "remote.http_error", f"HTTP {response.status_code} redirect without a Location"
        )
    target = response.url.join(location)
    if target.scheme not in ("http", "https"):
        raise ArchiveError(
            "remote.redirect_scheme", f"Redirect to {target.scheme!r} is not followed"
        )
    if current.startswith("https://") and target.scheme != "https":
        raise ArchiveError(
            "remote.downgrade",
            f"Redirect from https to {target} refused: an https root is never fetched in the clear",
        )
    return str(target)


_T = TypeVar("_T")


def _run_in_own_loop(fetch: Callable[[], Awaitable[_T]]) -> _T:
    """Run ``fetch`` in a private event loop on its own thread and return its result.

    Repositories are synchronous and may be built inside a running event loop (a server's
    request handler), where a loop of our own cannot start: a short-lived thread can.
    """
    import anyio

    outcome: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(anyio.run(fetch))
        except BaseException as exc:  # handed to the calling thread, which raises it
            failure.append(exc)

    worker = threading.Thread(target=run, name="skillshelf-download", daemon=True)
    worker.start()
    worker.join()  # bounded: fetch() runs under the download deadline
    if failure:
        raise failure[0]
    return outcome[0]


def _client() -> httpx.AsyncClient:
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
    # Redirects are followed by _fetch, which refuses a downgrade from https to http.
    return httpx.AsyncClient(
        follow_redirects=False,
        timeout=httpx.Timeout(_READ_TIMEOUT_S, connect=_CONNECT_TIMEOUT_S),
        verify=verify,  # type: ignore[arg-type]
    )


async def _save_body(response: httpx.Response, folder: Path, limits: ArchiveLimits) -> Path:
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".download-")
    total = 0
    try:
        with os.fdopen(fd, "wb") as fh:
            async for chunk in response.aiter_bytes(_CHUNK):
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
    """The download's validators and tree name; empty when missing or not as written (a
    cache problem is a miss: the URL is downloaded again)."""
    data = read_cache_file(folder, _META)
    try:
        meta = json.loads(data) if data is not None else {}
    except ValueError:
        logger.debug("URL root cache %s ignored", folder / _META, exc_info=True)
        return {}
    if type(meta) is not dict or not all(type(v) is str for v in meta.values()):
        logger.debug("URL root cache %s ignored: not as written", folder / _META)
        return {}
    tree = meta.get("tree", "")
    if tree and not _TREE_NAME.fullmatch(tree):
        logger.debug("URL root cache %s ignored: tree %r", folder / _META, tree)
        return {}
    return meta


def _write_meta(folder: Path, meta: dict[str, str]) -> None:
    write_cache_file(folder, _META, json.dumps(meta).encode())


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
