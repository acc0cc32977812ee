"""The one MIME table: one answer per file, in every face that names a type."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillshelf.core.mime import guess_mime, is_binary
from skillshelf.exec.workspace import Workspace
from skillshelf.mcpserver.files import DigestCache, directory_children, skill_files
from skillshelf.repository import Repository
from skillshelf.skills.paths import read_skill_file
from skillshelf.testing import make_skill

TEXT = b"hello\n"
BLOB = b"\x00\x01\x02"
CASES = [
    ("app.ts", TEXT, "text/typescript", False),
    ("font.ttf", BLOB, "font/ttf", True),
    ("font.woff2", BLOB, "font/woff2", True),
    ("notes.md", TEXT, "text/markdown", False),
    ("NOTES.MD", TEXT, "text/markdown", False),
    ("run.py", TEXT, "text/x-python", False),
    ("data.json", TEXT, "application/json", False),
    ("conf.yaml", TEXT, "application/yaml", False),
    ("icon.svg", b"<svg/>", "image/svg+xml", False),
    ("doc.pdf", b"%PDF-1.7", "application/pdf", True),
    ("pic.png", b"\x89PNG", "image/png", True),
    ("a.tar.gz", BLOB, "application/gzip", True),
    (
        "report.docx",
        BLOB,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        True,
    ),
    ("noext", TEXT, "text/plain", False),
    ("blob", BLOB, "application/octet-stream", True),
    (".hidden", TEXT, "text/plain", False),
    ("fake.txt", BLOB, "text/plain", True),  # a NUL makes any file binary, whatever its name
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "head", "mime", "binary"), CASES, ids=IDS)
def test_table_gives_one_type_and_binary_verdict(
    name: str, head: bytes, mime: str, binary: bool
) -> None:
    assert guess_mime(name, head) == mime
    assert guess_mime(f"deep/folder/{name}", head) == mime
    assert is_binary(mime, head) is binary


def test_unknown_name_without_bytes_is_octet_stream() -> None:
    assert guess_mime("noext") == "application/octet-stream"


@pytest.mark.parametrize(("name", "head", "mime", "binary"), CASES, ids=IDS)
def test_every_face_answers_the_table(
    tmp_path: Path, name: str, head: bytes, mime: str, binary: bool
) -> None:
    root = tmp_path / "skills"
    skill_dir = make_skill(root, "demo", files={f"assets/{name}": head})
    skill = Repository([root], cache_dir=False, lockfile=False).get("demo")

    read = read_skill_file(skill.path, f"assets/{name}")
    assert (read.mime, read.binary) == (mime, binary)

    listed = {f.relative: f.mime for f in skill_files(skill, DigestCache()).files}
    assert listed[f"assets/{name}"] == mime
    assert {c.name: c.mime for c in directory_children(skill, "assets")}[name] == mime

    workspace = Workspace(tmp_path / "ws")
    (workspace.out_dir / name).write_bytes((skill_dir / "assets" / name).read_bytes())
    collected, _ = workspace.collect([f"out/{name}"])
    assert [f.mime for f in collected] == [mime]
