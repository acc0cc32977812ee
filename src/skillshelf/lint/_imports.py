"""Do a skill's Python scripts import modules the environment lacks? (best effort)

The sandbox runs scripts with the harness's interpreter and packages and cannot install
anything, so a script importing ``pypdf`` fails there unless the operator installed it.
:func:`script_imports` lists a script's top-level imports without running or importing
anything (``ast``); it leaves out relative imports, imports guarded by ``try``/``except
ImportError`` (optional dependencies) and ``if TYPE_CHECKING:`` blocks. :func:`unavailable`
(the environment-dependent part, called where the subject is gathered) keeps those that are
neither in the standard library nor found by :func:`importlib.util.find_spec`, which looks a
top-level name up without importing it. :func:`check_imports` (pure) leaves out modules the
skill ships itself (``scripts/helpers.py``, a ``scripts/`` package) and reports the rest.
A script nested too deeply for Python's parser is one finding of its own
(:func:`check_unparsable`), never a failure of the whole run.
"""

from __future__ import annotations

import ast
import importlib.util
import logging
import sys
from collections.abc import Iterator
from typing import Final

from skillshelf.exec.missing import PACKAGE_HINTS
from skillshelf.lint._model import LintFinding, LintSubject, ScriptImport, finding

__all__ = [
    "ScriptImport",
    "check_imports",
    "check_unparsable",
    "script_imports",
    "unavailable",
]

logger = logging.getLogger(__name__)

_OPTIONAL: Final = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def script_imports(file: str, source: str) -> list[ScriptImport] | None:
    """The unconditional top-level imports of one Python source (none when it does not parse).

    Returns:
        None when the parser gives up on the source's nesting (a 40 KB ``1+1+…`` chain, a
        long run of unary operators): Python could not run the script either.
    """
    try:
        tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError):
        return []  # not Python 3 (or NUL bytes): nothing to say about its imports
    except (RecursionError, MemoryError):
        # The C parser reports a nesting past its stack as MemoryError; the source is at most
        # MAX_DOC_BYTES, so this is the nesting, not a machine out of memory.
        return None
    found: dict[str, ScriptImport] = {}
    for node in _required(tree.body):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".", 1)[0]
            found.setdefault(top, ScriptImport(file, node.lineno, top))
    return list(found.values())


def _required(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements that need their imports whatever is installed: not under an import guard."""
    for node in body:
        if isinstance(node, ast.Try) and _guards_imports(node):
            yield from _required(node.orelse)
            yield from _required(node.finalbody)
            continue  # the guarded imports, and their fallbacks, are optional
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _required(node.orelse)
            continue
        yield node
        for field in ("body", "orelse", "finalbody", "handlers"):
            for child in getattr(node, field, None) or ():
                if isinstance(child, ast.ExceptHandler):
                    yield from _required(child.body)
                elif isinstance(child, ast.stmt):
                    yield from _required([child])


def _guards_imports(node: ast.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(k, ast.Name) and k.id in _OPTIONAL for k in kinds):
            return True
    return False


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def unavailable(
    imports: list[ScriptImport], known: dict[str, bool] | None = None
) -> list[ScriptImport]:
    """Those of ``imports`` neither in the standard library nor importable here.

    Args:
        imports: Imports found by :func:`script_imports`.
        known: Answers already worked out in this run, by module; filled in as modules are
            looked up (one ``find_spec`` per module per run, however many scripts import it).
    """
    known = {} if known is None else known
    out: list[ScriptImport] = []
    for used in imports:
        available = known.get(used.module)
        if available is None:
            available = known[used.module] = _available(used.module)
        if not available:
            out.append(used)
    return out


def _available(module: str) -> bool:
    if module in sys.stdlib_module_names or module in sys.builtin_module_names:
        return True
    try:
        # A top-level name: the finders look it up; nothing is imported or executed.
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError) as exc:
        logger.debug("find_spec(%r) failed: %s", module, exc)
        return True  # unknown: say nothing rather than something wrong


def check_imports(subject: LintSubject) -> list[LintFinding]:
    """A finding per module a script imports that neither the environment nor the skill has."""
    if not subject.unavailable_imports or subject.files is None:
        return []
    shipped = _shipped_modules(subject.files)
    out: list[LintFinding] = []
    for used in subject.unavailable_imports:
        if used.module in shipped:
            continue
        package = PACKAGE_HINTS.get(used.module, used.module)
        out.append(
            finding(
                "script.import_unavailable",
                subject,
                f"{used.file} imports {used.module!r}, which is neither in the standard library "
                "nor installed in this environment; in the sandbox the script fails with "
                "ModuleNotFoundError, and the model cannot install it",
                f"install {package!r} into the environment skillshelf runs in (or the container "
                "image), or say in the SKILL.md (compatibility) what the skill needs",
                file=used.file,
                line=used.line,
            )
        )
    return out


def check_unparsable(subject: LintSubject) -> list[LintFinding]:
    """A finding per Python script nested too deeply for Python's parser."""
    return [
        finding(
            "script.unparsable",
            subject,
            f"{script} nests too deeply for Python's parser (it gave up with a recursion or "
            "memory error), so Python cannot run it and its imports were not checked",
            "split the deeply nested expression into smaller statements; a generated file "
            "this deep is likely not meant to be a script",
            file=script,
        )
        for script in subject.unparsable_scripts
    ]


def _shipped_modules(files: frozenset[str]) -> frozenset[str]:
    """Top-level names a script of the skill could import from the skill itself."""
    names: set[str] = set()
    for path in files:
        leaf = path.rsplit("/", 1)[-1]
        if leaf.endswith(".py"):
            names.add(leaf[:-3])
        elif "." not in leaf:
            names.add(leaf)  # a folder (a package, or a namespace package)
    return frozenset(names)
