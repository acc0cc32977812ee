"""What the server shares between requests: the repository, visibility, digests, entries.

A :class:`Viewer` describes who is asking (client name, HTTP headers); the visibility hook
decides per skill whether that viewer may see it, and every list, get, read, prompt and tool
goes through :meth:`Shelf.skills` or :meth:`Shelf.skill`, so a hidden skill is hidden
everywhere.

From its second request about one skill (``resources/read``, ``skills/get``) on, a skill
folder's walk is kept (:mod:`skillshelf.skills.walk_cache`) with the file list derived from
it: later requests check an ``lstat`` per folder and file instead of listing, checking and
sniffing them again, and get what a fresh walk would give. Keeping a walk costs an ``lstat``
per entry more than walking, which a skill asked about once never earns back; listings of
every skill walk afresh, so they neither pay that nor push out the walks of skills in use.
"""

from __future__ import annotations

import bisect
import datetime
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from skillshelf.core import yaml_loader
from skillshelf.core.frontmatter import FrontmatterError, decode_skill_md, parse_frontmatter
from skillshelf.errors import clip
from skillshelf.mcpserver.files import (
    DigestCache,
    SkillFiles,
    UriError,
    file_uri,
    skill_files,
)
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill, read_skill_md
from skillshelf.skills.walk_cache import WalkCache

__all__ = ["Shelf", "Viewer", "Visibility"]

logger = logging.getLogger("skillshelf.mcp")

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
KEPT_WALKS: Final = 1024  # skill folders whose walks are kept (the least recently used go)


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who sent a request.

    Attributes:
        client: The client's self-reported name (``clientInfo.name``), when known.
        headers: HTTP request headers (lower-case names); empty over stdio.
        session: The key session state is stored under.
        remote: True over HTTP: the client may be on another machine, so nothing it is
            told names a path on this one.
    """

    client: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    session: str = "stdio"
    remote: bool = False


Visibility = Callable[[Skill, Viewer], bool]
"""Decides whether a viewer may see a skill; hidden skills are absent from every answer."""


class Shelf:
    """The repository as one viewer sees it, with cached digests and frontmatter.

    Args:
        repo: Where the skills come from.
        visible: The visibility hook; None shows every skill to everyone.
    """

    def __init__(self, repo: Repository, *, visible: Visibility | None = None) -> None:
        self.repo = repo
        self.visible = visible
        self.digests = DigestCache()
        # True while a file watcher calls forget() after every change: listings are then
        # kept until the next change instead of re-checking every file on every request.
        self.trust_cache = False
        self._files: dict[tuple[str, tuple[int, int, int, int]], SkillFiles] = {}
        self._walks = WalkCache(limit=KEPT_WALKS)
        self._asked: OrderedDict[str, None] = OrderedDict()  # folders asked about once
        self._lock = threading.Lock()
        self._frontmatter: dict[str, tuple[tuple[int, int], dict[str, Any]]] = {}
        self._roots: dict[str, str] = {}

    def serves(self, skill: Skill, viewer: Viewer) -> bool:
        """Whether ``skill`` is served to ``viewer``: visible to it, and valid on disk now.

        A skill edited into an invalid state is not served (the repository keeps its last
        good version for in-process agents, but every answer here is read from disk): after
        a re-scan the server offers what a fresh start would, by the same verdict.
        """
        if skill.name in self.repo.stale:
            return False
        return self.visible is None or self.visible(skill, viewer)

    def skills(self, viewer: Viewer) -> list[Skill]:
        """The skills ``viewer`` may see, sorted by name."""
        if self.visible is None and not self.repo.stale:
            return self.repo.skills
        return [s for s in self.repo.skills if self.serves(s, viewer)]

    def skills_after(self, after: str | None, viewer: Viewer) -> Iterator[Skill]:
        """The skills ``viewer`` may see whose names sort after ``after``, in name order:
        a page costs a binary search and the skills it walks, not a pass over them all."""
        skills, names = self.repo.memo(
            "shelf.sorted", lambda found: (found, tuple(s.name for s in found))
        )
        start = 0 if after is None else bisect.bisect_right(names, after)
        # By index: islice would step through the `start` skills before the page one by one.
        return (skills[i] for i in range(start, len(skills)) if self.serves(skills[i], viewer))

    def skill(self, name: str, viewer: Viewer) -> Skill:
        """The skill called ``name``, if ``viewer`` may see it.

        Raises:
            UriError: No such skill for this viewer.
        """
        skill = self.repo.find(name)
        if skill is None or not self.serves(skill, viewer):
            raise UriError(f"No skill is served at {clip(file_uri(name))}")
        return skill

    def files(self, skill: Skill, *, keep: bool = False) -> SkillFiles:
        """Every file of ``skill`` with digests (or why it is over the limits).

        Args:
            skill: The skill.
            keep: A request about this one skill (``resources/read``, ``skills/get``): from
                the second on, the folder's walk is kept. Listings walk afresh.
        """
        key = (skill.directory, skill.stamp)
        if self.trust_cache and (cached := self._files.get(key)) is not None:
            return cached
        root = self._roots.get(skill.directory)
        if root is None:  # a skill folder reached through a link: resolved once per scan
            root = self._roots[skill.directory] = os.path.realpath(skill.directory)
        if keep and self._asked_before(root):
            listing = self._walks.get(root).derive(
                ("shelf.files", skill.skill_md_name),
                lambda walk: skill_files(skill, self.digests, root=root, walk=walk),
            )
        else:
            listing = skill_files(skill, self.digests, root=root)
        if self.trust_cache:
            with self._lock:
                self._files[key] = listing
        return listing

    def _asked_before(self, root: str) -> bool:
        with self._lock:
            if root in self._asked:
                self._asked.move_to_end(root)
                return True
            self._asked[root] = None
            while len(self._asked) > KEPT_WALKS:
                self._asked.popitem(last=False)
            return False

    def entry(self, skill: Skill, *, keep: bool = False) -> dict[str, Any]:
        """The SEP-2640 ``Skill`` entry: uri, verbatim frontmatter, every file with its digest.

        ``keep`` as in :meth:`files`.

        Raises:
            UriError: The skill is over the extension's limits, so it is not served.
            OSError: SKILL.md cannot be read.
        """
        files = self.files(skill, keep=keep)
        if files.over_limit is not None:
            raise UriError(
                f"Skill {skill.name!r} is not served: it has {files.over_limit} "
                "(the skills extension's per-skill limits)"
            )
        return {
            "uri": file_uri(skill.name),
            "frontmatter": self.frontmatter(skill),
            "resources": [
                {"uri": file_uri(skill.name, f.relative), "digest": f.digest, "size": f.size}
                for f in files.files
            ],
        }

    def frontmatter(self, skill: Skill) -> dict[str, Any]:
        """SKILL.md's frontmatter exactly as written, as a JSON object."""
        path = os.fspath(skill.skill_md)
        with self._lock:
            cached = self._frontmatter.get(path)
        if cached is not None and self.trust_cache:
            return cached[1]
        info = os.stat(path)
        signature = (info.st_mtime_ns, info.st_size)
        if cached is not None and cached[0] == signature:
            return cached[1]
        try:
            raw, _mtime, _size = read_skill_md(path, full=True)
            text, _problem = decode_skill_md(raw, mode="lenient")
            fm_text = parse_frontmatter(text, mode="lenient").text
            # YAML 1.2's core schema, as a host parsing the SKILL.md itself reads it (PyYAML's
            # YAML 1.1 would turn `yes` into true and `010` into 8): the entry must match.
            data = _jsonable(yaml_loader.load(fm_text, flavour="core"))
        except (yaml_loader.YAMLError, FrontmatterError) as exc:  # tolerated by the lenient parser,
            # or an edit since the scan
            logger.warning(
                "frontmatter of %s is not plain YAML (%s); serving name and description only",
                path,
                type(exc).__name__,
            )
            data = {}
        value = data if isinstance(data, dict) else {}
        # name and description are always present, as the entry's contract promises.
        value.setdefault("name", skill.name)
        value.setdefault("description", skill.description)
        with self._lock:
            self._frontmatter[path] = (signature, value)
        return value

    def forget(self) -> None:
        """Drop cached digests and frontmatter (after a re-scan)."""
        self.digests.clear()
        self._walks = WalkCache(limit=KEPT_WALKS)
        with self._lock:
            self._asked.clear()
            self._frontmatter.clear()
            self._roots.clear()
            self._files.clear()


def _jsonable(value: object) -> Any:
    """YAML values as JSON values: dates become ISO strings, keys become strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and not math.isfinite(value):
        return None  # .inf and .nan have no JSON form (JSON.stringify writes null too)
    return value
