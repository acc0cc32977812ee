"""Builders for malformed archives: what a hostile or broken upload looks like, byte for byte."""

from __future__ import annotations

import gzip
import io
import tarfile
import warnings
import zipfile
import zlib
from collections.abc import Sequence

from trust_helpers import raw_zip, skill_md

Member = tuple[str, str, bytes]  # (name, "file" | "dir" | "symlink" | "hardlink", data or link)


def zip_of(members: Sequence[Member], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip holding exactly ``members``, duplicates and odd names included."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names; we want them
        with zipfile.ZipFile(buffer, "w", method) as zf:
            for name, kind, data in members:
                info = zipfile.ZipInfo(name + ("/" if kind == "dir" else ""))
                info.compress_type = method
                if kind == "symlink":
                    info.external_attr = (0o120777 << 16) | 0x20
                elif kind == "dir":
                    info.external_attr = (0o40755 << 16) | 0x10
                else:
                    info.external_attr = 0o644 << 16
                zf.writestr(info, b"" if kind == "dir" else data)
    return buffer.getvalue()


def tar_of(members: Sequence[Member], *, gz: bool = False) -> bytes:
    """A tar holding exactly ``members`` (links with their target as ``data``)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=tarfile.PAX_FORMAT) as tf:
        for name, kind, data in members:
            info = tarfile.TarInfo(name)
            info.mode = 0o755 if kind == "dir" else 0o644
            if kind == "file":
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
                continue
            info.type = {
                "dir": tarfile.DIRTYPE,
                "symlink": tarfile.SYMTYPE,
                "hardlink": tarfile.LNKTYPE,
            }[kind]
            info.linkname = data.decode("utf-8", "replace") if kind != "dir" else ""
            tf.addfile(info)
    return buffer.getvalue()


def encrypted_zip() -> bytes:
    """A zip whose member says it is encrypted (general purpose flag bit 0)."""
    data = zip_of([("demo/SKILL.md", "file", skill_md("demo"))], method=zipfile.ZIP_STORED)
    # The flag sits at offset 6 of the local header and offset 8 of the central header.
    blob = bytearray(data)
    local = blob.find(b"PK\x03\x04")
    central = blob.find(b"PK\x01\x02")
    blob[local + 6] |= 1
    blob[central + 8] |= 1
    return bytes(blob)


def bad_crc_zip() -> bytes:
    text = skill_md("demo")
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = deflater.compress(text) + deflater.flush()
    wrong = (zlib.crc32(text) ^ 0xFFFF) & 0xFFFFFFFF
    return raw_zip("demo/SKILL.md", deflated, size=len(text), compressed=len(deflated), crc=wrong)


def corrupt_deflate_zip() -> bytes:
    """Valid directories, garbage where the deflate stream should be."""
    text = skill_md("demo") * 50
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    deflated = bytearray(deflater.compress(text) + deflater.flush())
    deflated[2:12] = b"\xff" * 10
    crc = zlib.crc32(text)
    return raw_zip(
        "demo/SKILL.md", bytes(deflated), size=len(text), compressed=len(deflated), crc=crc
    )


def gzip_of(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


GOOD_SKILL: Member = ("demo/SKILL.md", "file", skill_md("demo"))
