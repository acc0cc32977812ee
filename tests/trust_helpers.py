"""Helpers for the archive, trust and CLI tests: a real HTTP(S) server and archive builders.

The server runs stdlib ``http.server`` in a thread on 127.0.0.1, serves bytes by path with an
``ETag`` and ``Last-Modified``, answers conditional requests with 304, and counts requests.
"""

from __future__ import annotations

import datetime
import hashlib
import io
import ipaddress
import ssl
import struct
import tarfile
import threading
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

_LAST_MODIFIED = "Wed, 01 Jan 2025 00:00:00 GMT"


@dataclass
class Served:
    """What the server holds and saw."""

    files: dict[str, bytes] = field(default_factory=dict)
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[tuple[str, int]] = field(default_factory=list)
    port: int = 0
    scheme: str = "http"

    def url(self, path: str) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def statuses(self) -> list[int]:
        return [status for _, status in self.requests]


def _handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.lstrip("/")
            if path in served.redirects:
                self._reply(302, b"", {"Location": served.redirects[path]})
                return
            body = served.files.get(path)
            if body is None:
                self._reply(404, b"not found")
                return
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                self._reply(304, b"", {"ETag": etag})
                return
            self._reply(200, body, {"ETag": etag, "Last-Modified": _LAST_MODIFIED})

        def _reply(self, status: int, body: bytes, headers: Mapping[str, str] = {}) -> None:
            served.requests.append((self.path, status))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def http_server(tls: ssl.SSLContext | None = None) -> Iterator[Served]:
    """Serve ``Served.files`` on 127.0.0.1 (HTTPS with ``tls``) until the block ends."""
    served = Served(scheme="https" if tls else "http")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(served))
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    served.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def self_signed_cert(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (its own CA); returns (cert, key) paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "skillshelf test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def server_tls(cert: Path, key: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def skill_md(name: str, description: str = "A test skill. Use when testing.") -> bytes:
    return f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n".encode()


def make_zip(files: Mapping[str, bytes], *, symlinks: Mapping[str, str] = {}) -> bytes:
    """A zip of ``files`` (deflated) plus symlink entries (Unix mode in external_attr)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        for name, target in symlinks.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16) | 0x20
            zf.writestr(info, target)
    return buffer.getvalue()


def make_tar(members: Sequence[tuple[tarfile.TarInfo, bytes | None]], *, gz: bool = True) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buffer.getvalue()


def tar_file(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.mode = 0o644
    return info, data


def tar_special(name: str, kind: bytes, *, link: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    return info, None


def raw_zip(name: str, deflated: bytes, *, size: int, compressed: int, crc: int = 0) -> bytes:
    """One deflated entry written by hand, with whatever sizes the header should claim."""
    encoded = name.encode()
    local = struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, compressed, size, len(encoded), 0
    )
    central = struct.pack(
        "<IHHHHHHIIIHHHHHII",
        0x02014B50,
        20,
        20,
        0,
        8,
        0,
        0,
        crc,
        compressed,
        size,
        len(encoded),
        0,
        0,
        0,
        0,
        0o644 << 16,
        0,
    )
    body = local + encoded + deflated
    directory = central + encoded
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(directory), len(body), 0)
    return body + directory + end


def stored_zip_of_empty_files(count: int) -> bytes:
    """A zip of ``count`` empty stored entries, written by hand (zipfile needs seconds)."""
    body, directory = bytearray(), bytearray()
    for i in range(count):
        name = f"alpha/f{i}".encode()
        offset = len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0)
        body += name
        directory += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50, 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), 0, 0, 0, 0, 0o644 << 16, offset,
        )  # fmt: skip
        directory += name
    # Over 65,535 entries needs the zip64 end records.
    zip64_at = len(body) + len(directory)
    zip64 = struct.pack(
        "<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(directory), len(body)
    )
    locator = struct.pack("<IIQI", 0x07064B50, 0, zip64_at, 1)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, len(directory), len(body), 0)
    return bytes(body + directory + zip64 + locator + end)


def deflated_zeros(total: int, chunk: int = 1 << 20) -> bytes:
    """A raw deflate stream of ``total`` zero bytes, built without compressing them all.

    With a full flush after each chunk the compressor's output for identical chunks repeats,
    so one chunk is compressed and its output repeated: a 1 GiB stream costs milliseconds.
    """
    assert total % chunk == 0
    block = bytes(chunk)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    assert compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH) == repeated
    tail = zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    return first + repeated * (total // chunk - 1) + tail


def files_under(directory: Path) -> set[str]:
    return {str(p.relative_to(directory)) for p in directory.rglob("*")}
