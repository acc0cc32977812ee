"""The labelled real collections: public skill collections copied as frontmatter only, and the
user requests labelled over them (``tests/corpus/collections``, see its README).

Each collection folder holds ``skills.jsonl`` (one ``{"path", "frontmatter"}`` object per
SKILL.md, ``path`` as in the source repository, ``frontmatter`` the YAML as written between
the fences), the collection's ``LICENSE`` and a ``SOURCE.md``. :func:`materialise` writes the
skills back as folders, each SKILL.md its frontmatter and a one-line body, so
``Repository([root])`` reads the copy as it reads the original: the same folders, names,
descriptions and other keys (search reads only those), hidden folders and nested skills
where they were.

Used by ``bench/visible_recall.py`` and ``tests/harness/test_visible_recall.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from skillshelf import safe_join
from skillshelf.core.yaml_loader import load as load_yaml

__all__ = [
    "COLLECTIONS",
    "REQUESTS",
    "LabelledRequest",
    "SkillCopy",
    "collection_names",
    "materialise",
    "read_collection",
    "read_requests",
]

COLLECTIONS: Final = Path(__file__).resolve().parents[1] / "tests" / "corpus" / "collections"
REQUESTS: Final = COLLECTIONS / "requests.yaml"
_KEYS: Final = ("collection", "request", "expected")
BODY: Final = (
    "Frontmatter-only copy for tests; the original is named in the collection's SOURCE.md.\n"
)


@dataclass(frozen=True, slots=True)
class SkillCopy:
    """One SKILL.md of a collection: where it is in the source repository and its frontmatter."""

    path: str
    frontmatter: str

    def skill_md(self) -> str:
        """The SKILL.md the copy stands for: the frontmatter and a one-line body."""
        head = self.frontmatter if self.frontmatter.endswith("\n") else f"{self.frontmatter}\n"
        return f"---\n{head}---\n\n{BODY}"


@dataclass(frozen=True, slots=True)
class LabelledRequest:
    """A user request and the one skill of its collection that is the right one for it."""

    collection: str
    request: str
    expected: str


def collection_names() -> list[str]:
    """The collections, by folder name, in name order."""
    return sorted(p.parent.name for p in COLLECTIONS.glob("*/skills.jsonl"))


def read_collection(name: str) -> list[SkillCopy]:
    """The SKILL.md copies of collection ``name``.

    Raises:
        ValueError: The collection does not exist or a line is not a ``{"path",
            "frontmatter"}`` object of strings.
    """
    path = COLLECTIONS / name / "skills.jsonl"
    if name not in collection_names():
        raise ValueError(f"no collection {name!r} in {COLLECTIONS}; have {collection_names()}")
    copies: list[SkillCopy] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        if not (
            isinstance(row, dict)
            and isinstance(row.get("path"), str)
            and isinstance(row.get("frontmatter"), str)
            and row["path"].rsplit("/", 1)[-1] in ("SKILL.md", "skill.md")
        ):
            raise ValueError(f"{path}:{number}: not a {{path, frontmatter}} object of a SKILL.md")
        copies.append(SkillCopy(row["path"], row["frontmatter"]))
    return copies


def materialise(name: str, target: Path) -> Path:
    """Write collection ``name`` as skill folders under ``target`` (created); return ``target``.

    Raises:
        ValueError: See :func:`read_collection`.
        FileAccessError: A path in the collection leads outside ``target``.
    """
    target.mkdir(parents=True, exist_ok=True)
    for copy in read_collection(name):
        skill_md = safe_join(target, copy.path)
        skill_md.parent.mkdir(parents=True, exist_ok=True)
        skill_md.write_text(copy.skill_md(), encoding="utf-8")
    return target


def read_requests(path: Path = REQUESTS) -> list[LabelledRequest]:
    """The labelled requests of ``path`` (a YAML list of ``{collection, request, expected}``).

    Raises:
        ValueError: The file is not such a list.
    """
    data = load_yaml(path.read_text(encoding="utf-8"), flavour="yaml11")
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of {{collection, request, expected}}")
    requests: list[LabelledRequest] = []
    for number, item in enumerate(data, start=1):
        fields = [item.get(k) for k in _KEYS] if isinstance(item, dict) else [None]
        if not all(isinstance(f, str) and f.strip() for f in fields):
            raise ValueError(f"{path}: item {number} is not a {{collection, request, expected}}")
        requests.append(LabelledRequest(item["collection"], item["request"], item["expected"]))
    return requests
