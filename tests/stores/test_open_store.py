"""Store URLs: which store each opens, and which are refused; importing stores stays light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillshelf import stores
from skillshelf.errors import ConfigError, SkillshelfError
from skillshelf.stores import StoreConflictError, StoreError, open_store
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore


@pytest.mark.parametrize("url", [None, "memory:", "memory://"])
def test_memory_urls_open_a_private_memory_store(url: str | None) -> None:
    first, second = open_store(url), open_store(url)
    assert isinstance(first, MemoryStore)
    first.update("s1", "main", lambda _doc: {"a": 1})
    assert second.get("s1", "main") is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:state/sessions.db", "state/sessions.db"),
        ("sqlite:///state/sessions.db", "state/sessions.db"),
        ("sqlite:./sessions.db", "sessions.db"),
    ],
)
def test_sqlite_urls_accept_relative_paths(
    url: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = open_store(url)
    assert isinstance(store, SQLiteStore)
    store.close()
    assert (tmp_path / expected).is_file()


@pytest.mark.parametrize("form", ["sqlite:{path}", "sqlite:///{path}"])
def test_sqlite_urls_accept_absolute_paths(form: str, tmp_path: Path) -> None:
    # An absolute path already starts with "/", so the second form reads "sqlite:////abs/...".
    path = tmp_path / "abs" / "sessions.db"
    store = open_store(form.format(path=path))
    assert isinstance(store, SQLiteStore)
    assert store.path == path
    store.close()


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6399/2", "rediss://cache.example:6380/0"])
def test_redis_urls_open_a_redis_store_without_connecting_yet(url: str) -> None:
    store = open_store(url)
    assert isinstance(store, RedisStore)
    store.close()


@pytest.mark.parametrize(
    "url",
    [
        "ftp://x",
        "",
        "memory",
        "postgres://localhost/db",
        "sqlite:",
        "sqlite:///",
        "sqlite::memory:",
        "sqlite://host/sessions.db",
        "/tmp/sessions.db",
    ],
)
def test_unusable_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match=r"sqlite:|memory:|SQLite"):
        open_store(url)


def test_the_error_families_are_drawn_correctly() -> None:
    assert issubclass(StoreConflictError, StoreError)
    assert issubclass(StoreError, SkillshelfError)


def test_store_classes_are_exported_lazily() -> None:
    assert stores.SQLiteStore is SQLiteStore
    assert stores.MemoryStore is MemoryStore
    assert stores.RedisStore is RedisStore
    with pytest.raises(AttributeError):
        _ = stores.PostgresStore


def test_importing_stores_loads_no_driver() -> None:
    code = (
        "import sys, skillshelf.stores; "
        "print(','.join(m for m in ('redis', 'sqlite3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
