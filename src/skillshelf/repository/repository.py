"""The skills visible to an agent: roots, precedence, shadowing, refresh.

Roots come first from the caller (in order), else from ``SKILLSHELF_ROOTS``, else the
conventional ones: the project's ``.agents/skills`` and ``.claude/skills`` (searched from the
working directory up to the repository top), then the user's ``~/.agents/skills`` and
``~/.claude/skills``. The first root that defines a name wins; later copies are reported as
shadowed, never silently dropped.
"""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import Callable, Hashable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeVar

from skillshelf.core.catalog import CatalogEntry, CatalogFormat, render_catalog
from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import Mode
from skillshelf.errors import SkillNotFoundError, UsageError
from skillshelf.repository._findings import Changes, Ignored, Shadowed, Skipped
from skillshelf.repository._roots import resolve_roots
from skillshelf.repository._scan_state import (
    ScanState,
    apply_review,
    diff,
    keep_last_good,
    place,
    win,
)
from skillshelf.skills.discovery import (
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_DIRS,
    Index,
    WalkOptions,
    walk_root,
)
from skillshelf.skills.index_cache import default_cache_dir, load_index, save_index
from skillshelf.skills.roots import is_archive_root, is_url_root
from skillshelf.skills.skill import Skill

if TYPE_CHECKING:
    from skillshelf.core.search import SearchHit
    from skillshelf.skills.archive import ArchiveLimits, Materialized
    from skillshelf.skills.paths import FileContent
    from skillshelf.trust.gate import TrustGate
    from skillshelf.trust.lockfile import Lockfile
    from skillshelf.trust.scanner import ScanPolicy

__all__ = ["Repository"]

# Derived values kept per scan (see Repository.memo); a caller keying on a fresh closure per
# request must not grow them without bound.
_MEMO_LIMIT: Final = 64
_T = TypeVar("_T")
_VERSIONS = itertools.count(1)
_LOCK_ENV = "SKILLSHELF_LOCK"


class Repository:
    """The skills found under a list of roots.

    Opening scans every root (reusing a persistent index of unchanged files); :meth:`refresh`
    re-scans and reports what changed. Iterating yields the usable skills sorted by name.

    Args:
        roots: Root folders in precedence order; None means ``SKILLSHELF_ROOTS`` or the
            conventional roots.
        mode: ``"lenient"`` (default) or ``"strict"`` (skills-ref's rules).
        include_hidden: Walk hidden folders and ``node_modules`` too.
        max_depth: Folder levels searched below each root.
        max_dirs: Folders visited per root before stopping with a diagnostic.
        cache_dir: Where the persistent index lives; None for the default, False for none.
        cwd: Where to search for project roots (default: the working directory).
        home: The user's home for user roots (default: ``~``).
        lockfile: A lockfile (path or :class:`~skillshelf.trust.lockfile.Lockfile`): skills whose
            content differs from it, or that it does not list, are held back (see
            :attr:`skipped`) until approved. None reads ``$SKILLSHELF_LOCK``; False: none.
        scan_policy: Which roots the content scanner reads and what a ``block`` finding does.
            Archive and URL roots are always scanned; None means the default policy (block).
        archive_limits: Caps for archive and URL roots (sizes, counts, expansion ratio,
            download deadline); None means the defaults of
            :class:`~skillshelf.skills.archive.ArchiveLimits`.

    Archive and URL roots are extracted into ``cache_dir`` (or the default cache folder when
    ``cache_dir`` is False, which only turns the index off). A URL is downloaded or
    re-validated when the repository opens; :meth:`refresh` reuses that copy (it retries
    only a URL that could not be used).
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        *,
        mode: Mode = "lenient",
        include_hidden: bool = False,
        max_depth: int = DEFAULT_MAX_DEPTH,
        max_dirs: int = DEFAULT_MAX_DIRS,
        cache_dir: str | os.PathLike[str] | Literal[False] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        home: str | os.PathLike[str] | None = None,
        lockfile: str | os.PathLike[str] | Lockfile | Literal[False] | None = None,
        scan_policy: ScanPolicy | None = None,
        archive_limits: ArchiveLimits | None = None,
    ) -> None:
        self.roots, self.explicit_roots = resolve_roots(roots, cwd=cwd, home=home)
        self._archive_limits = archive_limits
        self.options = WalkOptions(
            mode=mode, include_hidden=include_hidden, max_depth=max_depth, max_dirs=max_dirs
        )
        self._cache_dir = (
            None
            if cache_dir is False
            else Path(cache_dir)
            if cache_dir is not None
            else default_cache_dir()
        )
        self._indexes: dict[str, Index] = {}
        self._placed: dict[str, dict[str, Skill]] = {}
        self._root_dirs: dict[str, str] = {}
        self._remote: dict[str, Materialized] = {}
        self._trust = _trust_gate(self.roots, lockfile, scan_policy)
        self._state = ScanState()
        self.refresh()

    # -- reading -------------------------------------------------------------------------

    @property
    def skills(self) -> list[Skill]:
        """Usable skills, sorted by name."""
        return list(self._state.skills.values())

    @property
    def shadowed(self) -> list[Shadowed]:
        """Skills hidden by an earlier root's skill of the same name."""
        return list(self._state.shadowed)

    @property
    def skipped(self) -> list[Skipped]:
        """SKILL.md files that could not be used, with the reason."""
        return list(self._state.skipped)

    @property
    def ignored(self) -> list[Ignored]:
        """Candidates that are not skills, each with why: a ``SKILL.MD`` in the wrong case, a
        SKILL.md link leading nowhere, a folder reached again through a link."""
        return list(self._state.ignored)

    def nested(self) -> list[Ignored]:
        """SKILL.md files inside the folders of found skills (``discovery.nested``).

        Walks every file of every found skill, so it is for reports (``list --all``), not
        for each open.
        """
        from skillshelf.skills.discovery import nested_skill_mds

        state = self._state
        outer = [*state.skills.values(), *(s.skill for s in state.shadowed)]
        found: list[Ignored] = []
        for skill in sorted(outer, key=lambda s: s.directory):
            for relative in nested_skill_mds(skill.directory):
                found.append(
                    Ignored(
                        os.path.join(skill.directory, *relative.split("/")),
                        skill.root,
                        "discovery.nested",
                        f"Inside skill {skill.name!r}'s folder: skills are not looked for "
                        "inside skills, so it is a file of that skill; move its folder out to "
                        "make it a skill of its own",
                    )
                )
        return found

    @property
    def stale(self) -> frozenset[str]:
        """Skills kept at their last good version: their SKILL.md was edited into an invalid
        state since the last good scan (a fresh open would not have them)."""
        return self._state.stale

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """Problems with the roots themselves (missing, unreadable, caps, loops)."""
        return list(self._state.diagnostics)

    @property
    def root_directories(self) -> dict[str, str]:
        """The folder each usable root was read from (archives: the extracted tree)."""
        return dict(self._root_dirs)

    @property
    def lockfile(self) -> Lockfile | None:
        """The lockfile in force, if any."""
        return self._trust.lockfile if self._trust is not None else None

    def pinned_digest(self, name: str) -> str | None:
        """The approved content digest of skill ``name`` under the lockfile, if one is in force.

        Staging passes it on, so content that changed after the last refresh is not run.
        """
        lock = self.lockfile
        entry = lock.entries.get(name) if lock is not None else None
        return entry.digest if entry is not None else None

    def approve(self, *names: str) -> Changes:
        """Approve the current content of held-back skills ``names`` and save the lockfile.

        Returns:
            What the refresh after approving changed (the approved skills are added).

        Raises:
            UsageError: No lockfile is configured.
            SkillNotFoundError: A name is neither held back nor visible.
        """
        if self._trust is None or self._trust.lockfile is None:
            raise UsageError("approve() needs a repository opened with a lockfile")
        self._trust.approve(names, self._state.skills, self._root_dirs)
        return self.refresh()

    @property
    def version(self) -> int:
        """The scan's generation: a different number after every :meth:`refresh` (and so
        after every change a watcher picks up). Values derived from the skills can be kept
        until it changes; :meth:`memo` does that."""
        return self._state.version

    def memo(self, key: Hashable, factory: Callable[[Sequence[Skill]], _T]) -> _T:
        """``factory(skills)`` computed once per scan and ``key``, then reused.

        ``skills`` are the usable skills sorted by name, of the same scan the value is kept
        with, so a refresh in another thread never pairs a value with the wrong skills. At
        most a few dozen keys are kept per scan (the oldest is dropped first); the values go
        with the scan when a refresh replaces it.
        """
        state = self._state  # one snapshot: refresh() swaps the whole state at once
        try:
            return state.memo[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        value = factory(tuple(state.skills.values()))
        memo = state.memo
        while len(memo) >= _MEMO_LIMIT:
            try:
                del memo[next(iter(memo))]
            except (KeyError, RuntimeError, StopIteration):  # another thread got there first
                break
        memo[key] = value
        return value

    def names(self) -> list[str]:
        """Names of the usable skills, sorted."""
        return list(self._state.skills)

    def find(self, name: str) -> Skill | None:
        """The skill called ``name``, or None."""
        return self._state.skills.get(name)

    def get(self, name: str) -> Skill:
        """Return the skill called ``name``.

        Raises:
            SkillNotFoundError: No such skill; carries the closest names.
        """
        skill = self._state.skills.get(name)
        if skill is None:
            from skillshelf.core.search import closest_names

            raise SkillNotFoundError(name, closest_names(name, self._state.skills))
        return skill

    def __iter__(self) -> Iterator[Skill]:
        return iter(list(self._state.skills.values()))

    def __len__(self) -> int:
        return len(self._state.skills)

    def __contains__(self, name: object) -> bool:
        return name in self._state.skills

    def catalog(self, *, format: CatalogFormat = "xml", budget_chars: int | None = None) -> str:
        """The catalog for a system prompt: every model-invocable skill, sorted by name.

        Skills marked ``disable-model-invocation: true`` are left out (only the user may
        invoke them).
        """
        entries = [CatalogEntry.of(s) for s in self._state.skills.values() if s.model_invocable]
        return render_catalog(entries, format=format, budget_chars=budget_chars)

    def search(self, query: str, *, limit: int = 10) -> list[SearchHit]:
        """Rank the skills for ``query`` (name, triggers, tags, description, BM25)."""
        state = self._state  # one snapshot: refresh() swaps the whole state at once
        if state.search_index is None:
            from skillshelf.core.search import SearchIndex

            state.search_index = SearchIndex(state.skills.values())
        return state.search_index.search(query, limit=limit)

    def read_file(self, name: str, path: str, *, max_chars: int = 24_000) -> FileContent:
        """Read a file of skill ``name`` by a path relative to its folder.

        Raises:
            SkillNotFoundError: No such skill.
            FileAccessError: The path escapes the skill, is missing or unreadable.
        """
        from skillshelf.skills.paths import read_skill_file

        skill = self.get(name)
        return read_skill_file(
            skill.real_path, path, max_chars=max_chars, anchored=True, one_name=skill.untrusted
        )

    # -- scanning ------------------------------------------------------------------------

    def refresh(self) -> Changes:
        """Re-scan every root; unchanged SKILL.md files are not re-read.

        Returns:
            The names added, changed (new content) and removed since the last scan.
        """
        previous = self._state
        before = previous.skills
        state = ScanState(version=next(_VERSIONS))
        winners: dict[str, Skill] = {}
        # A scan allocates tens of thousands of small, long-lived objects and no cycles; the
        # cyclic collector would only re-traverse them (it costs ~30% of a cold open).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            for root in self.roots:
                self._scan_root(root, state, winners)
        finally:
            if gc_was_enabled:
                gc.enable()
        if before and state.skipped:
            keep_last_good(before, state, winners)
        if self._trust is not None:
            apply_review(self._trust.review(winners), state, winners)
            for skill in winners.values():
                skill.untrusted = skill.root in self._trust.untrusted
        state.skills = dict(sorted(winners.items()))
        changes = diff(before, state.skills)
        if not changes:
            state.search_index = previous.search_index
        # One assignment: a reader in another thread sees the old state or the new, never a mix.
        self._state = state
        return changes

    def _scan_root(self, root: str, state: ScanState, winners: dict[str, Skill]) -> None:
        directory = self._root_directory(root, state)
        if directory is None:
            return
        self._root_dirs[root] = directory
        cache_key = f"{self.options}\0{os.path.realpath(directory)}"
        index = self._indexes.get(root)
        if index is None:
            index = (
                load_index(self._cache_dir, cache_key, mode=self.options.mode)
                if self._cache_dir
                else {}
            )
        result = walk_root(directory, self.options, index)
        state.diagnostics.extend(result.diagnostics)
        state.ignored += [
            Ignored(d.path or "", root, d.code, d.message, d.severity) for d in result.ignored
        ]
        new_index: Index = {}
        # The skills of the last scan of this root by SKILL.md: one built from the same
        # index row (the file unchanged) is kept as it is, so a refresh of an unchanged tree
        # builds nothing.
        last = self._placed.get(root, {})
        placed: dict[str, Skill] = {}
        for found in result.found:
            if found.reusable:
                new_index[found.skill_md] = found.row
            kept = last.get(found.skill_md)
            if kept is not None and kept.built_from(found.row, found.real):
                placed[found.skill_md] = kept
                win(kept, state, winners)
            else:
                skill = place(root, found, state)
                if skill is not None:
                    placed[found.skill_md] = skill
                    win(skill, state, winners)
        self._placed[root] = placed
        if self._cache_dir is not None and (result.parsed or len(new_index) != len(index)):
            save_index(self._cache_dir, cache_key, new_index)
        self._indexes[root] = new_index

    def _root_directory(self, root: str, state: ScanState) -> str | None:
        if is_archive_root(root):
            # Imported here: only archive and URL roots pay for the archive and download code.
            from skillshelf.skills.sources import materialize

            # A URL is fetched (or re-validated) once per repository: a refresh after a local
            # edit must not wait on the network.
            found: Materialized | None = self._remote.get(root)
            if found is None or found.directory is None:
                found = materialize(
                    root, self._cache_dir or default_cache_dir(), limits=self._archive_limits
                )
                if is_url_root(root):
                    self._remote[root] = found
            state.diagnostics.extend(found.diagnostics)
            return found.directory
        path = os.path.abspath(os.path.expanduser(root))
        if os.path.isfile(path) and os.path.basename(path).lower() == "skill.md":
            return os.path.dirname(path)
        if not os.path.isdir(path):
            if self.explicit_roots:
                state.diagnostics.append(
                    Diagnostic(
                        "root.missing",
                        "error",
                        "Root does not exist or is not a folder",
                        None,
                        root,
                    )
                )
            return None
        return path


def _trust_gate(
    roots: list[str],
    lockfile: str | os.PathLike[str] | Lockfile | Literal[False] | None,
    scan_policy: ScanPolicy | None,
) -> TrustGate | None:
    """The lockfile and scanner checks, or None when neither applies (the fast path)."""
    if lockfile is None:
        lockfile = os.environ.get(_LOCK_ENV) or False
    untrusted = [r for r in roots if is_archive_root(r)]
    if scan_policy is not None:
        untrusted += [r for r in roots if r in scan_policy.untrusted_roots]
    if lockfile is False and not untrusted:
        return None
    # Imported here: plain folder roots without a lockfile never pay for the scanner's start-up.
    from skillshelf.trust.gate import TrustGate

    return TrustGate.create(lockfile or None, scan_policy, frozenset(untrusted))
