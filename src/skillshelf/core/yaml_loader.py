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

__all__ = [
    "MAX_YAML_DEPTH",
    "MAX_YAML_EXPANDED_CHARS",
    "MAX_YAML_NODES",
    "Flavour",
    "YAMLError",
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


YAMLError = yaml.YAMLError
"""Every failure to read YAML: callers catch this rather than import PyYAML themselves."""


class YamlTooComplexError(yaml.YAMLError):
    """The document expands to more than :data:`MAX_YAML_NODES` nodes or
    :data:`MAX_YAML_EXPANDED_CHARS` characters."""


class YamlTooDeepError(yaml.YAMLError):
    """The document nests collections more than :data:`MAX_YAML_DEPTH` levels deep.

    Attributes:
        line: 0-based line of the text where the limit was crossed.
    """

    def __init__(self, message: str, *, line: int) -> None:
        super().__init__(message)
        self.line = line


class _StringLoader(_SAFE_BASE):  # type: ignore[misc]
    """A safe loader that resolves every untagged scalar to a string."""


_StringLoader.yaml_implicit_resolvers = {}


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


class _Yaml11Loader(_SAFE_BASE):  # type: ignore[misc]
    """PyYAML's safe loader, as its own class so nothing here can alter the shared one."""


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


@functools.cache
def _core_schema_loader() -> type[Any]:
    replaced = {_BOOL, _INT, _FLOAT, _TIMESTAMP}

    class CoreSchemaLoader(_SAFE_BASE):  # type: ignore[misc]
        """A safe loader with YAML 1.2 core-schema scalars."""

    CoreSchemaLoader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in rows if tag not in replaced]
        for first, rows in _SAFE_BASE.yaml_implicit_resolvers.items()
    }
    CoreSchemaLoader.add_implicit_resolver(_BOOL, _CORE_BOOL, list("tTfF"))
    CoreSchemaLoader.add_implicit_resolver(_INT, _CORE_INT, list("-+0123456789"))
    CoreSchemaLoader.add_implicit_resolver(_FLOAT, _CORE_FLOAT, list("-+0123456789."))
    CoreSchemaLoader.add_constructor(_INT, _construct_core_int)
    return CoreSchemaLoader


def _loader(flavour: Flavour) -> type[Any]:
    if flavour == "strings":
        return _StringLoader
    if flavour == "strict":
        return _StrictLoader
    if flavour == "core":
        return _core_schema_loader()
    return _Yaml11Loader


def compose(text: str, *, flavour: Flavour) -> yaml.Node | None:
    """The node graph of a single-document YAML text (None for an empty document).

    Aliases are shared nodes here, not copies, but the value they would expand to has been
    measured against :data:`MAX_YAML_NODES` and :data:`MAX_YAML_EXPANDED_CHARS`.

    Raises:
        YamlTooDeepError: Collections nest deeper than :data:`MAX_YAML_DEPTH`.
        YamlTooComplexError: The expanded value is over the node or character limit.
        yaml.YAMLError: The text is not YAML (``problem_mark`` says where).
    """
    loader = _loader(flavour)
    _check_depth(text, loader)
    node: yaml.Node | None = yaml.compose(text, Loader=loader)
    if node is not None:
        _check_size(node)
    return node


def parse_events(text: str) -> Iterator[yaml.Event]:
    """The parser events of ``text`` as strict mode's parser reads it.

    Raises:
        yaml.YAMLError: The text is not YAML.
    """
    return yaml.parse(text, Loader=_StrictLoader)


def construct(node: yaml.Node | None, *, flavour: Flavour) -> object:
    """Plain Python data from a node :func:`compose` returned (and so measured).

    Raises:
        yaml.YAMLError: A tag the flavour's safe schema does not know.
    """
    if node is None:
        return None
    return _loader(flavour)("").construct_document(node)


def load(text: str, *, flavour: Flavour) -> object:
    """Load a single-document YAML text as plain data (the bounded ``yaml.safe_load``).

    Raises:
        YamlTooDeepError: Collections nest deeper than :data:`MAX_YAML_DEPTH`.
        YamlTooComplexError: The value would be over the node or character limit.
        yaml.YAMLError: The text is not YAML, or uses a tag that is not plain data.
    """
    return construct(compose(text, flavour=flavour), flavour=flavour)


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
