"""Builders shared by the hostile-cache tests and the cache fuzz: a root whose discovery index
is written for real, then rewritten row by row with values of every other shape."""

from __future__ import annotations

import marshal
from collections.abc import Callable, Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

from skillshelf.core.manifest import Manifest
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.testing import make_skill

Row = tuple[Any, ...]
# Each skill's description, manifest and diagnostics by name; "<skipped>" holds the paths of
# the SKILL.md files skipped, second.
Seen = dict[str, tuple[str, Any, Any]]
Mutation = Callable[[Row], object]


def _deep(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = [value]
    return value


# A value of every type marshal writes, and odd ones of the types a row holds.
OTHER_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    2**80,
    1.5,
    complex(1, 2),
    "",
    "x\n- forged: entry",
    "\u202eevil",
    b"",
    b"\x00\xff",
    (),
    ("a", 1),
    [],
    ["a"],
    {},
    {"k": 1},
    {1: "v"},
    frozenset({1}),
    _deep(200),
)

# Kinds of row: a plain valid skill, a valid skill with extensions, a skill that is not valid.
KINDS = ("plain", "extended", "broken")


def write_kind(root: Path, kind: str, folder: str) -> Path:
    """A skill folder whose index row is of ``kind``."""
    if kind == "plain":
        return make_skill(root, folder, f"The {folder} skill. Use when testing.")
    if kind == "extended":
        return make_skill(
            root,
            folder,
            f"The {folder} skill. Use when testing.",
            frontmatter={
                "version": "1.0",
                "tags": ["one", "two"],
                "triggers": ["do the thing"],
                "metadata": {"author": "someone"},
                "license": "MIT",
                "allowed-tools": "Read Bash(git:*)",
                "x-extra": {"nested": ["a", "b"]},
            },
        )
    return make_skill(root, folder, raw="---\nname: Not/Valid\n---\nbody\n")


def _with(row: Row, index: int, value: object) -> Row:
    return (*row[:index], value, *row[index + 1 :])


def _blob(tail: Any, diags: Any) -> bytes:
    return marshal.dumps((tail, diags))


def _tail_of(row: Row) -> tuple[Any, ...]:
    tail = marshal.loads(row[7])[0]
    if tail is None:  # a broken skill's row: mutate a plain manifest's fields instead
        plain = Manifest("plain", "plain")
        return tuple(getattr(plain, f.name) for f in fields(Manifest)[2:])
    return tuple(tail)


def _tail_mutation(field: int, value: object) -> Mutation:
    def mutate(row: Row) -> Row:
        tail = _tail_of(row)
        diags = marshal.loads(row[7])[1]
        return _with(row, 7, _blob((*tail[:field], value, *tail[field + 1 :]), diags))

    return mutate


def _diag_mutation(field: int, value: object) -> Mutation:
    def mutate(row: Row) -> Row:
        tail = marshal.loads(row[7])[0]
        diag = ("code", "warning", "message", None, None, None)
        return _with(row, 7, _blob(tail, (_with(diag, field, value),)))

    return mutate


def _swap(index: int, value: object) -> Mutation:
    return lambda row: _with(row, index, value)


def _cut(length: int) -> Mutation:
    return lambda row: row[:length]


def _blob_cut(length: int) -> Mutation:
    return lambda row: _with(row, 7, row[7][:length])


def _forged_value(index: int, suffix: str) -> Mutation:
    def mutate(row: Row) -> Row:
        return _with(row, index, f"{row[index] or 'x'}{suffix}")

    return mutate


# What a row's blob holds, field by field, as the test sees the format: a value of the right
# type may be a row that is well formed (then it is used, and only has to be shown safely).
_OPTIONAL_TEXT = frozenset({0, 1, 4, 6, 7, 10, 11, 12})
_TEXTS = frozenset({3, 5, 13, 14})


def _fits_tail(field: int, value: object) -> bool:
    if field in _OPTIONAL_TEXT:
        return value is None or type(value) is str
    if field in _TEXTS:
        return type(value) is tuple and all(type(v) is str for v in value)
    if field in (8, 9):
        return type(value) is bool
    if type(value) is not dict:
        return False
    # metadata: text to text; extra: text keys, values of YAML's shapes
    return all(type(k) is str and type(v) in (str, list, dict) for k, v in value.items())


def _fits_diag(field: int, value: object) -> bool:
    if field in (0, 2):
        return type(value) is str
    if field == 1:
        return value in ("error", "warning", "info")
    if field in (3, 4):
        return value is None or type(value) is str
    return value is None or (type(value) is int and value >= 0)


def mutations() -> Iterator[tuple[str, Mutation, bool]]:
    """Every hostile change of a row: each field swapped for each other type, truncated
    and lengthened rows, blobs truncated, swapped and deep, names and shown fields a
    SKILL.md could never give. The flag says whether the row must be a miss (else it may be
    a well-formed row, of values a SKILL.md could hold)."""
    for index in range(8):
        for value in OTHER_VALUES:
            # Any other description text is a description; nothing else may be used.
            strict = not (index == 5 and type(value) is str)
            yield f"row[{index}]={value!r:.30}", _swap(index, value), strict
    for length in range(8):
        yield f"row[:{length}]", _cut(length), True
    yield "row+1", lambda r: (*r, None), True
    yield "row as list", list, True
    yield "deep row", lambda r: _deep(1500), True
    for field in range(16):
        for value in OTHER_VALUES:
            name = f"tail[{field}]={value!r:.30}"
            yield name, _tail_mutation(field, value), not _fits_tail(field, value)
    for field in range(6):
        for value in OTHER_VALUES:
            name = f"diag[{field}]={value!r:.30}"
            yield name, _diag_mutation(field, value), not _fits_diag(field, value)
    for cut in (0, 1, 2, 5, 10, 20):
        yield f"blob[:{cut}]", _blob_cut(cut), True
    for value in OTHER_VALUES:
        yield f"blob={value!r:.30}", _swap(7, marshal.dumps(value)), True
    yield "tail short", lambda r: _with(r, 7, _blob(_tail_of(r)[:-1], ())), True
    yield "tail long", lambda r: _with(r, 7, _blob((*_tail_of(r), None), ())), True
    yield "blob deep", lambda r: _with(r, 7, _blob(_deep(1500), ())), True
    yield "name line break", _forged_value(4, "\n- forged: a second skill"), True
    yield "name slash", _forged_value(4, "/../x"), True
    yield "name bidi", _forged_value(4, "\u202e"), True
    yield "description escape", _forged_value(5, "\x1b[2J"), True
    yield "description padded", _forged_value(5, "  "), True
    yield "tags line break", _tail_mutation(13, ("tag\n- forged: entry",)), True
    yield "tags too many", _tail_mutation(13, tuple(f"t{i}" for i in range(65))), True
    yield "version too long", _tail_mutation(12, "v" * 201), True
    yield "extra too deep", _tail_mutation(15, {"k": _deep(80)}), True
    yield "invocable flipped", lambda r: _with(r, 6, not r[6]), True


def index_files(cache: Path) -> list[Path]:
    """The discovery index files in ``cache``."""
    return sorted(cache.glob("index-*.bin"))


def rewrite_rows(cache: Path, change: Callable[[str, Row], object]) -> int:
    """Rewrite every row of every index file in ``cache`` as ``change(path, row)`` gives it
    (the file keeps its format tag and key); returns the rows rewritten."""
    rewritten = 0
    for file in index_files(cache):
        fmt, key, rows = marshal.loads(file.read_bytes())
        new = {path: change(path, row) for path, row in rows.items()}
        rewritten += len(new)
        file.write_bytes(marshal.dumps((fmt, key, new)))
    return rewritten


def truth(root: Path) -> Seen:
    """What a repository of ``root`` without a cache finds (see :func:`seen`)."""
    return seen(Repository([root], cache_dir=False))


def seen(repo: Repository) -> Seen:
    """Each skill's description, manifest and diagnostics by name, and the skipped paths."""
    found: Seen = {s.name: _seen(s) for s in repo.skills}
    found["<skipped>"] = ("", sorted(str(s.path) for s in repo.skipped), None)
    return found


def _seen(skill: Skill) -> tuple[str, Any, Any]:
    return (skill.description, skill.manifest, skill.diagnostics)
