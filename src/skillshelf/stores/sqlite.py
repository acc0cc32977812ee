"""The embedded default session store: one SQLite file, shareable by processes on one machine.

Each update is a ``BEGIN IMMEDIATE`` transaction, so writers from any thread or process take
the database's write lock in turn while readers carry on (WAL mode). A process killed in the
middle of an update leaves its transaction uncommitted, and SQLite discards it on next open.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from skillshelf.errors import UsageError
from skillshelf.stores.base import (
    Doc,
    Entries,
    EntriesUpdater,
    StoreError,
    Updater,
    _check_ids,
    _check_names,
    _check_ttl,
    _decode,
    _decode_entries,
    _encode,
    _encode_changes,
    _ReentryGuard,
    check_name,
)

__all__ = ["SQLiteStore"]

# How long a writer waits for another process's transaction before failing with "database is
# locked": updates are short, so only a stuck or heavily overloaded writer ever takes this long.
_BUSY_TIMEOUT_MS = 30_000
# Backoff between attempts to switch a file other connections are opening to WAL mode.
_WAL_RETRY_FIRST_S = 0.001
_WAL_RETRY_CAP_S = 0.05
_SCHEMA_VERSION = 3
# Version 1 had no expiry; version 2 adds expires_at (Unix seconds, NULL = never) and its index;
# version 3 adds the entries table (a row per entry; the rows of one record share expires_at).
_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS docs (
    session TEXT NOT NULL,
    agent TEXT NOT NULL,
    doc TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (session, agent)
) WITHOUT ROWID
"""
_MIGRATE_V2 = (
    "ALTER TABLE docs ADD COLUMN expires_at REAL",
    "CREATE INDEX IF NOT EXISTS docs_expiry ON docs (expires_at) WHERE expires_at IS NOT NULL",
)
_MIGRATE_V3 = (
    """
    CREATE TABLE IF NOT EXISTS entries (
        session TEXT NOT NULL,
        agent TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        expires_at REAL,
        PRIMARY KEY (session, agent, name)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX IF NOT EXISTS entries_expiry ON entries (expires_at) "
    "WHERE expires_at IS NOT NULL",
)
_UPSERT_ENTRY = """
INSERT INTO entries (session, agent, name, doc, expires_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (session, agent, name) DO UPDATE
SET doc = excluded.doc, expires_at = excluded.expires_at
"""
_UPSERT = """
INSERT INTO docs (session, agent, doc, updated_at, expires_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (session, agent) DO UPDATE
SET doc = excluded.doc, updated_at = excluded.updated_at, expires_at = excluded.expires_at
"""
_LIVE = "(expires_at IS NULL OR expires_at > ?)"
# Expired rows are deleted a batch at a time by writers, so no write pays for a large backlog.
_PURGE_BATCH = 200
_PURGE = f"""
DELETE FROM docs WHERE (session, agent) IN (
    SELECT session, agent FROM docs WHERE expires_at <= ? LIMIT {_PURGE_BATCH}
)
"""
_PURGE_ENTRIES = f"""
DELETE FROM entries WHERE (session, agent, name) IN (
    SELECT session, agent, name FROM entries WHERE expires_at <= ? LIMIT {_PURGE_BATCH}
)
"""
_RECORD = "session = ? AND agent = ?"


class SQLiteStore:
    """Session documents in a SQLite database file (created, with its parent dirs, if missing).

    Thread-safe (one connection per thread) and safe for several processes sharing the file
    on one machine. Not for network filesystems, whose locking SQLite cannot rely on.

    Args:
        path: The database file.
        ttl_s: When set, a document expires this many seconds after its last read or update;
            expired rows are invisible at once and deleted by later writes, a bounded batch at
            a time.
        clock: Unix seconds now (tests pass a fake one).

    Raises:
        StoreError: The file cannot be opened as a database, or a newer skillshelf wrote it.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        ttl_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        _check_ttl(ttl_s)
        self.path = Path(path)
        self._ttl_s = ttl_s
        self._clock = clock
        self._local = threading.local()
        self._connections: set[sqlite3.Connection] = set()
        self._lock = threading.Lock()
        self._guard = _ReentryGuard()
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._migrate(self._connection())
        except BaseException as exc:  # broad on purpose: close on anything, ^C too; re-raised
            self.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise StoreError(f"Cannot use {self.path} as a session store: {exc}") from exc
            raise

    def get(self, session: str, agent: str) -> Doc | None:
        """Return a fresh copy of the document, or None when there is none."""
        _check_ids(session, agent)
        self._guard.check()
        now = self._clock()
        with self._talking():
            conn = self._connection()
            row = conn.execute(
                f"SELECT doc FROM docs WHERE session = ? AND agent = ? AND {_LIVE}",
                (session, agent, now),
            ).fetchone()
            if row and self._ttl_s is not None:  # reading is using: the TTL starts again
                conn.execute(
                    "UPDATE docs SET expires_at = ? WHERE session = ? AND agent = ?",
                    (now + self._ttl_s, session, agent),
                )
        return _decode(row[0]) if row else None

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one document; see :class:`SessionStore`."""
        _check_ids(session, agent)
        with self._guard.hold(), self._talking():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = self._clock()
                row = conn.execute(
                    f"SELECT doc FROM docs WHERE session = ? AND agent = ? AND {_LIVE}",
                    (session, agent, now),
                ).fetchone()
                new = fn(_decode(row[0]) if row else None)
                if new is None:
                    conn.execute(
                        "DELETE FROM docs WHERE session = ? AND agent = ?", (session, agent)
                    )
                else:
                    expires = None if self._ttl_s is None else now + self._ttl_s
                    conn.execute(_UPSERT, (session, agent, _encode(new), now, expires))
                conn.execute(_PURGE, (now,))
                conn.execute("COMMIT")
            except BaseException:  # broad on purpose: anything, ^C too, rolls back; re-raised
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return new

    def get_entries(
        self, session: str, agent: str, names: Collection[str] | None = None
    ) -> Entries:
        """Return the named entries that exist; see :class:`SessionStore`."""
        _check_ids(session, agent)
        wanted = _check_names(names)
        self._guard.check()
        now = self._clock()
        with self._talking():
            conn = self._connection()
            rows = _select_entries(conn, session, agent, wanted, now)
            if rows and self._ttl_s is not None:  # reading is using: the whole record's TTL
                conn.execute(
                    f"UPDATE entries SET expires_at = ? WHERE {_RECORD} AND {_LIVE}",
                    (now + self._ttl_s, session, agent, now),
                )
        return _decode_entries(dict(rows))

    def update_entries(
        self, session: str, agent: str, names: Collection[str], fn: EntriesUpdater
    ) -> Mapping[str, Doc | None]:
        """Atomically read the named entries and apply ``fn``'s changes; see
        :class:`SessionStore`."""
        _check_ids(session, agent)
        wanted = _check_names(names) or []
        with self._guard.hold(), self._talking():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                now = self._clock()
                rows = _select_entries(conn, session, agent, wanted, now) if wanted else []
                changes = fn(_decode_entries(dict(rows)))
                self._write_entries(conn, session, agent, _encode_changes(changes), now)
                conn.execute("COMMIT")
            except BaseException:  # broad on purpose: anything, ^C too, rolls back; re-raised
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return changes

    def _write_entries(
        self,
        conn: sqlite3.Connection,
        session: str,
        agent: str,
        changes: dict[str, str | None],
        now: float,
    ) -> None:
        if not changes:
            return
        expires = None if self._ttl_s is None else now + self._ttl_s
        if expires is not None:
            # Rows of this record that expired stay expired: only live ones get the new TTL.
            conn.execute(
                f"DELETE FROM entries WHERE {_RECORD} AND expires_at <= ?", (session, agent, now)
            )
        for name, doc in changes.items():
            if doc is None:
                conn.execute(
                    f"DELETE FROM entries WHERE {_RECORD} AND name = ?", (session, agent, name)
                )
            else:
                conn.execute(_UPSERT_ENTRY, (session, agent, name, doc, expires))
        if expires is not None:
            conn.execute(
                f"UPDATE entries SET expires_at = ? WHERE {_RECORD}", (expires, session, agent)
            )
            conn.execute(_PURGE_ENTRIES, (now,))

    def delete_session(self, session: str) -> None:
        """Delete the documents and entries of every agent of ``session``."""
        check_name("session id", session)
        self._guard.check()
        with self._talking():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute("DELETE FROM docs WHERE session = ?", (session,))
                conn.execute("DELETE FROM entries WHERE session = ?", (session,))
                conn.execute("COMMIT")
            except BaseException:  # broad on purpose: anything, ^C too, rolls back; re-raised
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document or entry, sorted."""
        self._guard.check()
        now = self._clock()
        with self._talking():
            rows = (
                self._connection()
                .execute(
                    f"SELECT session FROM docs WHERE {_LIVE} "
                    f"UNION SELECT session FROM entries WHERE {_LIVE}",
                    (now, now),
                )
                .fetchall()
            )
        return sorted(row[0] for row in rows)

    def close(self) -> None:
        """Close every thread's connection; the store cannot be used afterwards."""
        self._guard.check()
        with self._lock:
            self._closed = True
            connections = list(self._connections)
            self._connections.clear()
        for conn in connections:
            conn.close()

    @contextmanager
    def _talking(self) -> Iterator[None]:
        """Turn SQLite's failures (locked past the busy timeout, disk I/O) into StoreError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"The SQLite session store {self.path} failed: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        held: _Held | None = getattr(self._local, "held", None)
        if held is not None and not self._closed:
            return held.conn
        with self._lock:
            if self._closed:
                raise UsageError("This session store is closed.")
            # Autocommit (isolation_level=None): transactions are the explicit BEGIN IMMEDIATE
            # above, never the sqlite3 module's implicit ones. check_same_thread is off only
            # so that close() may close other threads' connections; each thread uses its own.
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._connections.add(conn)
        held = _Held(conn)
        # When the thread ends, its thread-local value goes and this closes the connection,
        # so a server that starts a thread per request does not pile up open files.
        weakref.finalize(held, _release, self._lock, self._connections, conn)
        self._local.held = held
        conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
        _use_wal(conn)
        # In WAL mode NORMAL never corrupts the file; a power cut (not a killed process) may
        # undo the last commits, an acceptable trade for session state.
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} holds session store schema {version}; this skillshelf "
                    f"knows up to {_SCHEMA_VERSION}. Upgrade skillshelf."
                )
            if version < 1:
                conn.execute(_SCHEMA_V1)
            if version < 2:
                for statement in _MIGRATE_V2:
                    conn.execute(statement)
            if version < 3:
                for statement in _MIGRATE_V3:
                    conn.execute(statement)
            if version < _SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:  # broad on purpose: anything, ^C too, rolls back; re-raised
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def _use_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode (it stays so), waiting out other openers.

    Switching the journal mode needs the file to itself and SQLite answers "database is
    locked" at once, without its busy handler, while another connection opens or migrates
    it: two workers starting together would fail. So the switch is retried, with a bounded
    backoff, for as long as the busy timeout.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    delay = _WAL_RETRY_FIRST_S
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "") != "SQLITE_BUSY" or time.monotonic() > deadline:
                raise
        time.sleep(delay)
        delay = min(delay * 2, _WAL_RETRY_CAP_S)


def _select_entries(
    conn: sqlite3.Connection, session: str, agent: str, names: list[str] | None, now: float
) -> list[tuple[str, str]]:
    if names is None:
        sql = f"SELECT name, doc FROM entries WHERE {_RECORD} AND {_LIVE}"
        return conn.execute(sql, (session, agent, now)).fetchall()
    if not names:
        return []
    marks = ", ".join("?" * len(names))
    sql = f"SELECT name, doc FROM entries WHERE {_RECORD} AND name IN ({marks}) AND {_LIVE}"
    return conn.execute(sql, (session, agent, *names, now)).fetchall()


class _Held:
    """One thread's connection, in a weak-referenceable box (connections themselves are not)."""

    __slots__ = ("__weakref__", "conn")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


def _release(
    lock: threading.Lock, connections: set[sqlite3.Connection], conn: sqlite3.Connection
) -> None:
    with lock:
        connections.discard(conn)
    conn.close()
