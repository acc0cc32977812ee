"""The one YAML entry point: every module that reads YAML calls this one.

Only *safe* loaders exist here: they build strings, numbers, booleans, lists and dicts, never
Python objects. libyaml's C parser is used when PyYAML has it. Aliases can make a tiny document
describe an exponentially large value ("billion laughs"), so :func:`compose` counts every node
the value would have, aliases included, and the characters of every scalar it would hold, and
refuses a document over :data:`MAX_YAML_NODES` or :data:`MAX_YAML_EXPANDED_CHARS`. Composing
and building recurse once per nesting level (libyaml's C composer overflows the C stack near
100,000 levels), so the parser's events are read first and a document nested deeper than
:data:`MAX_YAML_DEPTH` is refused before anything recursive runs.

Four flavours, for four readers:

* ``strings`` — lenient SKILL.md frontmatter: every untagged scalar resolves to a string
  (``version: 1.10`` stays ``"1.10"``), as skills-ref's strictyaml does.
* ``strict`` — strict SKILL.md frontmatter: the pure-Python parser patched to read like
  strictyaml's scanner (ruamel.yaml's fork of it); scalars are strings too.
* ``core`` — YAML 1.2's core schema, what JavaScript's ``yaml`` and most MCP hosts use: only
  ``true``/``false`` are booleans, ``010`` is ten, dates stay strings.
* ``yaml11`` — PyYAML's own safe schema (YAML 1.1), for files skillshelf itself defines.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any, Final, Literal

import yaml

from skillshelf.errors import SkillshelfError

__all__ = [
    "MAX_YAML_DEPTH",
    "MAX_YAML_EXPANDED_CHARS",
    "MAX_YAML_NODES",
    "Flavour",
    "YAMLError",
    "YamlError",
    "YamlSyntaxError",
    "YamlTooComplexError",
    "YamlTooDeepError",
    "compose",
    "construct",
    "load",
    "parse_events",
]

Flavour = Literal["strings", "strict", "core", "yaml11"]

# A frontmatter or a cases file never legitimately needs more nodes than this.
MAX_YAML_NODES: Final = 10_000
# Real frontmatter nests 2-4 levels; each level costs ~3 Python frames when composed and built.
MAX_YAML_DEPTH: Final = 64
# Twice the largest SKILL.md: text without aliases always fits, alias amplification never does.
MAX_YAML_EXPANDED_CHARS: Final = 2 * 1024 * 1024

_BOM: Final = "\ufeff"
_SAFE_BASE: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlError(SkillshelfError):
    """A YAML text cannot be read as plain data: the one error every flavour raises.

    Whatever layer notices the problem first (this module's limits, libyaml's scanner, the
    pure-Python parser, a constructor refusing a value, the interpreter's recursion limit), the
    caller sees one of the three subclasses below and never an exception type of PyYAML's.

    Attributes:
        line: 0-based line of the text where the problem was seen, None when unknown.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


YAMLError = YamlError
"""The name this module has always exported for :class:`YamlError`."""


class YamlSyntaxError(YamlError):
    """The text is not YAML, or holds a value its tag cannot build (``!!int abc``)."""


class YamlTooComplexError(YamlError):
    """The document expands to more than :data:`MAX_YAML_NODES` nodes or
    :data:`MAX_YAML_EXPANDED_CHARS` characters."""


class YamlTooDeepError(YamlError):
    """The document nests collections more than :data:`MAX_YAML_DEPTH` levels deep."""

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message, line=line)
        self.line: int = line


def _string_loader(base: type[Any]) -> type[Any]:
    """A safe loader that resolves every untagged scalar to a string."""
    return type("StringLoader", (base,), {"yaml_implicit_resolvers": {}})


class _StrictLoader(yaml.SafeLoader):
    """The pure-Python loader, for strict mode: strictyaml's scanner is ruamel.yaml's fork of it.

    It refuses tabs exactly where strictyaml does (libyaml takes more). Three of ruamel's changes
    are copied: only ``\\n`` and ``\\r`` restart the column count, so ``\\x85``, ``\\u2028``
    and ``\\u2029`` read the same; and, YAML 1.2 style, content after a ``...`` document end
    marker is another document rather than skipped, and a ``:`` with no key maps the empty key.
    """

    def forward(self, length: int = 1) -> None:
        if self.pointer + length + 1 >= len(self.buffer):
            self.update(length + 1)
        while length:
            ch = self.buffer[self.pointer]
            self.pointer += 1
            self.index += 1
            if ch == "\n" or (ch == "\r" and self.buffer[self.pointer] != "\n"):
                self.line += 1
                self.column = 0
            elif ch != _BOM:
                self.column += 1
            length -= 1

    def parse_document_end(self) -> yaml.DocumentEndEvent:
        event = super().parse_document_end()
        # YAML 1.2, as ruamel: after `...` anything but the end starts another (refused) document.
        self.state = self.parse_implicit_document_start
        return event

    def parse_block_mapping_key(self) -> yaml.Event:
        if self.check_token(yaml.ValueToken):
            # YAML 1.2, as ruamel: a `:` with no key before it gives the empty key.
            self.state = self.parse_block_mapping_value
            mark = self.peek_token().start_mark  # type: ignore[no-untyped-call]
            return self.process_empty_scalar(mark)
        event: yaml.Event = super().parse_block_mapping_key()  # type: ignore[no-untyped-call]
        return event


_StrictLoader.yaml_implicit_resolvers = {}


_BOOL: Final = "tag:yaml.org,2002:bool"
_INT: Final = "tag:yaml.org,2002:int"
_FLOAT: Final = "tag:yaml.org,2002:float"
_TIMESTAMP: Final = "tag:yaml.org,2002:timestamp"
_CORE_BOOL: Final = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_CORE_INT: Final = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_CORE_FLOAT: Final = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


def _construct_core_int(loader: Any, node: Any) -> int:
    value = str(loader.construct_scalar(node))
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value, 10)


def _core_schema_loader(base: type[Any]) -> type[Any]:
    """A safe loader with YAML 1.2 core-schema scalars."""
    replaced = {_BOOL, _INT, _FLOAT, _TIMESTAMP}
    loader: Any = type("CoreSchemaLoader", (base,), {})
    loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in rows if tag not in replaced]
        for first, rows in base.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(_BOOL, _CORE_BOOL, list("tTfF"))
    loader.add_implicit_resolver(_INT, _CORE_INT, list("-+0123456789"))
    loader.add_implicit_resolver(_FLOAT, _CORE_FLOAT, list("-+0123456789."))
    loader.add_constructor(_INT, _construct_core_int)
    return loader  # type: ignore[no-any-return]


@functools.cache
def _loader(flavour: Flavour, *, pure: bool = False) -> type[Any]:
    """The flavour's loader class: libyaml's parser when PyYAML has it, unless ``pure``."""
    if flavour == "strict":
        return _StrictLoader  # pure Python already
    base: type[Any] = yaml.SafeLoader if pure else _SAFE_BASE
    if flavour == "strings":
        return _string_loader(base)
    if flavour == "core":
        return _core_schema_loader(base)
    # PyYAML's own safe schema, as its own class so nothing here can alter the shared one.
    return type("Yaml11Loader", (base,), {})


def compose(text: str, *, flavour: Flavour) -> yaml.Node | None:
    """The node graph of a single-document YAML text (None for an empty document).

    Aliases are shared nodes here, not copies, but the value they would expand to has been
    measured against :data:`MAX_YAML_NODES` and :data:`MAX_YAML_EXPANDED_CHARS`.

    Raises:
        YamlTooDeepError: Collections nest deeper than :data:`MAX_YAML_DEPTH`.
        YamlTooComplexError: The expanded value is over the node or character limit.
        YamlSyntaxError: The text is not YAML (``line`` says where).
    """
    loader = _loader(flavour)
    try:
        node = _compose_checked(text, loader)
    except _PARSER_FAILURES as exc:
        node = _second_opinion(text, flavour, exc)
    if node is not None:
        _check_size(node)
    return node


def parse_events(text: str) -> Iterator[yaml.Event]:
    """The parser events of ``text`` as strict mode's parser reads it.

    Raises:
        YamlSyntaxError: The text is not YAML.
    """
    try:
        yield from yaml.parse(text, Loader=_StrictLoader)
    except _PARSER_FAILURES as exc:
        raise _refusal(exc) from None


def construct(node: yaml.Node | None, *, flavour: Flavour) -> object:
    """Plain Python data from a node :func:`compose` returned (and so measured).

    Raises:
        YamlSyntaxError: A tag the flavour's safe schema does not know, or a value its tag
            cannot build (``!!int abc``, ``!!timestamp 2020-13-45``).
    """
    if node is None:
        return None
    try:
        return _loader(flavour)("").construct_document(node)
    except yaml.YAMLError as exc:
        raise _refusal(exc) from None
    except (ValueError, KeyError, TypeError, OverflowError) as exc:
        # PyYAML's constructors let these out for a tagged value they cannot build.
        raise YamlSyntaxError(
            f"a value does not fit its tag ({type(exc).__name__}: {exc})", line=None
        ) from None


def load(text: str, *, flavour: Flavour) -> object:
    """Load a single-document YAML text as plain data (the bounded ``yaml.safe_load``).

    Raises:
        YamlTooDeepError: Collections nest deeper than :data:`MAX_YAML_DEPTH`.
        YamlTooComplexError: The value would be over the node or character limit.
        YamlSyntaxError: The text is not YAML, or uses a tag that is not plain data.
    """
    return construct(compose(text, flavour=flavour), flavour=flavour)


# What a parser or composer may raise for a text: PyYAML's own errors, a text it cannot
# encode for libyaml (a lone surrogate), and the interpreter's recursion limit.
_PARSER_FAILURES: Final = (yaml.YAMLError, UnicodeError, RecursionError)


def _compose_checked(text: str, loader: type[Any]) -> yaml.Node | None:
    _check_depth(text, loader)
    node: yaml.Node | None = yaml.compose(text, Loader=loader)
    return node


def _second_opinion(text: str, flavour: Flavour, first: BaseException) -> yaml.Node | None:
    """Read a text libyaml refused again with the pure-Python parser, and classify it.

    libyaml has limits of its own that change between releases (PyYAML 6.0.4's scanner
    refuses flow collections nested 1,000 deep before this module's depth check sees a
    single event). The pure-Python parser has none and keeps its own stack, so the verdict
    is this module's whichever layer noticed first: too deep by :data:`MAX_YAML_DEPTH`, not
    YAML by the pure-Python parser's reading, or, when only libyaml objected, the document.
    """
    pure = _loader(flavour, pure=True)
    if pure is _loader(flavour):
        raise _refusal(first) from None
    try:
        return _compose_checked(text, pure)
    except _PARSER_FAILURES as second:
        raise _refusal(second) from None


def _refusal(exc: BaseException) -> YamlError:
    """The project's error for what a parser, composer or constructor raised."""
    if isinstance(exc, YamlError):
        return exc
    if isinstance(exc, RecursionError):
        return YamlTooDeepError(
            f"the document nests collections more than {MAX_YAML_DEPTH} levels deep", line=0
        )
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line if mark is not None else None
    return YamlSyntaxError(" ".join(str(exc).split()) or type(exc).__name__, line=line)


def _check_depth(text: str, loader: type[Any]) -> None:
    # Every collection opens with an indicator of its own ('[', '{', '- ', ':' or '?'), so a
    # text with few of them cannot nest deeply: the usual frontmatter skips the second parse.
    indicators = (
        text.count("[") + text.count("{") + text.count("-") + text.count(":") + text.count("?")
    )
    if indicators <= MAX_YAML_DEPTH:
        return
    # The parser keeps its own stack (no recursion), and stops being read at the first level
    # too deep, so a hostile text costs no more than MAX_YAML_DEPTH levels of parsing.
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise YamlTooDeepError(
                    f"the document nests collections more than {MAX_YAML_DEPTH} levels deep",
                    line=event.start_mark.line if event.start_mark else 0,
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _check_size(node: yaml.Node) -> None:
    # Each visit counts, so an alias used n times costs n times its size, as built.
    stack = [node]
    count = 0
    chars = 0
    while stack:
        current = stack.pop()
        count += 1
        if count > MAX_YAML_NODES:
            raise YamlTooComplexError(
                f"the document expands to more than {MAX_YAML_NODES:,} YAML nodes "
                "(alias expansion?)"
            )
        if isinstance(current, yaml.ScalarNode):
            chars += len(current.value)
            if chars > MAX_YAML_EXPANDED_CHARS:
                raise YamlTooComplexError(
                    "the document expands to more than "
                    f"{MAX_YAML_EXPANDED_CHARS:,} characters (alias expansion?)"
                )
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack += (key, value)
