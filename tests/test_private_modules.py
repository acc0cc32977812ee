"""A package's private modules (``_name.py``, as httpx names them) are its own: no module
outside the package imports one, in src, bench or examples. import-linter holds this for the
harness and the tools by name; this holds it for every package, and for modules added later."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
# skillshelf._lazy and skillshelf._version are the top package's own helpers, for every module.
SHARED = {"skillshelf._lazy", "skillshelf._version"}
# Benchmarks that time an internal step on its own, by name, with the reason.
TIMED_INTERNALS = {
    "bench/lint.py": "times the similarity pass (skillshelf.lint._similar) apart from lint",
}


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    module = _module_of(path)
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imported(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names += [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names]
    return [n for n in names if n.startswith("skillshelf.")]


def _private_owner(name: str) -> str | None:
    """The package that owns ``name`` when it names a private module (or something in one)."""
    parts = name.split(".")
    for index, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            owner = parts[:index]
            # A private name in a module (stores.base._encode) is its package's.
            if not (SRC.joinpath(*owner)).is_dir():
                owner = owner[:-1]
            return ".".join(owner)
    return None


def test_no_module_imports_another_packages_private_module() -> None:
    offenders: dict[str, list[str]] = {}
    for folder in ("src", "bench", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if str(path.relative_to(ROOT)) in TIMED_INTERNALS:
                continue
            inside = _package_of(path) if folder == "src" else ""
            for name in _imported(path):
                owner = _private_owner(name)
                if owner is None or name in SHARED or name.rpartition(".")[0] in SHARED:
                    continue
                if inside != owner and not inside.startswith(owner + "."):
                    offenders.setdefault(str(path.relative_to(ROOT)), []).append(name)
    assert offenders == {}


def test_the_private_module_rule_reads_owners_and_imports_right() -> None:
    assert _private_owner("skillshelf.tools._spec") == "skillshelf.tools"
    assert _private_owner("skillshelf.tools._spec.ToolDef") == "skillshelf.tools"
    assert _private_owner("skillshelf.exec.workspace._policy") == "skillshelf.exec.workspace"
    assert _private_owner("skillshelf.stores.base._encode") == "skillshelf.stores"
    assert _private_owner("skillshelf.tools.Tool") is None
    assert _private_owner("skillshelf.tools.__all__") is None
    assert _package_of(SRC / "skillshelf" / "tools" / "_load.py") == "skillshelf.tools"
    assert _package_of(SRC / "skillshelf" / "tools" / "__init__.py") == "skillshelf.tools"
