"""SKILL.md text → (frontmatter mapping, body), with line-numbered errors.

This is the only module that sees raw frontmatter YAML, which it reads through
:mod:`~skillshelf.core.yaml_loader` (the one YAML entry point). Every scalar is loaded as a
*string* (no implicit typing: ``version: 1.10`` stays ``"1.10"``, ``yes`` stays ``"yes"``),
which is what skills-ref's strictyaml does and what the manifest layer expects; it decides
what each key means.

Two splitting rules exist:

* ``lenient`` (runtime default): the first line is ``---`` (a UTF-8 BOM and CRLF line ends are
  accepted); the frontmatter ends at the next line that is exactly ``---``. Anything a YAML
  *safe* loader accepts is accepted; tags that would build objects are refused.
* ``strict``: skills-ref 0.1.1's rules to the letter — the text must start with ``---``, is split
  on the first two ``---`` anywhere, the body is stripped, and the YAML must be of the subset
  strictyaml accepts (no flow collections, anchors, aliases, tags, duplicate keys or sibling
  maps indented differently; tabs only where its scanner takes them; ``<<`` merge keys as it
  treats them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Final, Literal

import yaml

from skillshelf.core.yaml_loader import (
    MAX_YAML_NODES,
    YamlError,
    YamlTooComplexError,
    YamlTooDeepError,
    compose,
    parse_events,
)
from skillshelf.errors import SkillshelfError

__all__ = [
    "Frontmatter",
    "FrontmatterError",
    "Mode",
    "YamlValue",
    "decode_skill_md",
    "parse_frontmatter",
]

Mode = Literal["lenient", "strict"]
YamlValue = str | list["YamlValue"] | dict[str, "YamlValue"]

_BOM: Final = "\ufeff"

_STR_TAG: Final = "tag:yaml.org,2002:str"
_SCALAR_TAGS: Final = frozenset(
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp")
)
_MAP_TAGS: Final = frozenset({"tag:yaml.org,2002:map", "tag:yaml.org,2002:omap"})
_SEQ_TAGS: Final = frozenset({"tag:yaml.org,2002:seq"})


class FrontmatterError(SkillshelfError):
    """The frontmatter could not be read.

    Attributes:
        code: Stable diagnostic code (``frontmatter.missing``, ``frontmatter.yaml``, …).
        message: Human-readable explanation (skills-ref's wording where it has one).
        line: 1-based line of the SKILL.md where the problem is, if known.
    """

    def __init__(self, code: str, message: str, *, line: int | None = None) -> None:
        self.code = code
        self.message = message
        self.line = line
        super().__init__(message)


@dataclass(slots=True)
class Frontmatter:
    """A parsed SKILL.md.

    Attributes:
        data: The frontmatter mapping; leaves are strings.
        body: The Markdown after the closing fence (stripped in strict mode, as skills-ref does).
        lines: 1-based line of each top-level key in the file.
        text: The frontmatter YAML exactly as written (between the fences).
        duplicate_keys: Keys given more than once (lenient mode keeps the last value).
        requoted: Keys whose plain value held ``": "`` and was read quoted (lenient mode's
            quote fallback), as ``(key, line)``.
    """

    data: dict[str, YamlValue]
    body: str
    lines: dict[str, int] = field(default_factory=dict)
    text: str = ""
    duplicate_keys: tuple[str, ...] = ()
    requoted: tuple[tuple[str, int], ...] = ()


def decode_skill_md(raw: bytes, *, mode: Mode = "lenient") -> tuple[str, FrontmatterError | None]:
    """Decode SKILL.md bytes as UTF-8 and normalise line ends to ``\\n``.

    Lenient mode strips a UTF-8 BOM, refuses NUL bytes and decodes invalid UTF-8 with replacement
    characters, returning the problem alongside the text so the caller can report it; strict mode
    refuses invalid UTF-8 and, like skills-ref's ``read_text``, keeps a BOM and NUL bytes.

    Raises:
        FrontmatterError: ``file.binary`` (lenient mode) for a NUL byte; ``file.encoding``
            (strict mode) for invalid UTF-8.
    """
    if mode == "lenient" and b"\x00" in raw:
        raise FrontmatterError("file.binary", "SKILL.md is a binary file, not UTF-8 text")
    problem = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        problem = FrontmatterError(
            "file.encoding",
            f"SKILL.md is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})",
            line=line,
        )
        if mode == "strict":
            raise problem from None
        text = raw.decode("utf-8", errors="replace")
    if mode == "lenient" and text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        # Universal newlines, like Path.read_text (which skills-ref uses).
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, problem


def parse_frontmatter(text: str, *, mode: Mode = "lenient") -> Frontmatter:
    """Split a decoded SKILL.md into frontmatter and body and load the YAML.

    Raises:
        FrontmatterError: with codes ``frontmatter.missing``, ``frontmatter.unclosed``,
            ``frontmatter.yaml``, ``frontmatter.tag``, ``frontmatter.too_deep``,
            ``frontmatter.too_complex`` or ``frontmatter.not_mapping``.
    """
    if mode == "strict":
        fm_text, body = _split_strict(text)
        first_line = 1  # strict frontmatter text starts right after '---' on line 1
    else:
        fm_text, body = _split_lenient(text)
        first_line = 2
    fast = _parse_simple(fm_text, first_line)
    if fast is not None:
        return Frontmatter(fast[0], body, fast[1], fm_text)
    if mode == "strict":
        return _parse_yaml(fm_text, body, first_line=first_line, strict=True)
    try:
        return _parse_yaml(fm_text, body, first_line=first_line, strict=False)
    except FrontmatterError as exc:
        if exc.code != "frontmatter.yaml":
            raise
        return _quote_fallback(fm_text, body, first_line, exc)


# A `key: value` line whose plain value holds ": " (`description: Automate X: manage …`): YAML
# reads a second mapping there and fails. Not a value that starts as a quoted, flow or block
# scalar, an alias, anchor or tag: those mean something else.
_COLON_VALUE: Final = re.compile(
    r"^(?P<lead>[ ]*(?:- )?[\w.-]+:[ ]+)(?P<value>[^\s'\"\[{|>&*!%@`#][^\n]*?: [^\n]*?)[ ]*$"
)


def _quote_fallback(
    fm_text: str, body: str, first_line: int, error: FrontmatterError
) -> Frontmatter:
    """Re-read frontmatter that failed with every plain value holding ``": "`` quoted.

    The Agent Skills client guide recommends this fallback for the commonest authoring slip
    (an unquoted colon in a description); lenient mode only. Raises the original error when
    nothing was quoted or the quoted text still does not load.
    """
    lines = fm_text.split("\n")
    requoted: list[tuple[str, int]] = []
    for row, line in enumerate(lines):
        match = _COLON_VALUE.match(line)
        if match is None:
            continue
        value = match.group("value").split(" #", 1)[0].rstrip()
        # JSON's string syntax is YAML's double-quoted one: every character is kept as is.
        lines[row] = match.group("lead") + json.dumps(value, ensure_ascii=False)
        key = match.group("lead").strip().removeprefix("- ").rstrip(":").strip()
        requoted.append((key, row + first_line))
    if not requoted:
        raise error
    try:
        fm = _parse_yaml("\n".join(lines), body, first_line=first_line, strict=False)
    except FrontmatterError:
        raise error from None
    fm.text = fm_text
    fm.requoted = tuple(requoted)
    return fm


def _split_strict(text: str) -> tuple[str, str]:
    if not text.startswith("---"):
        raise FrontmatterError(
            "frontmatter.missing", "SKILL.md must start with YAML frontmatter (---)", line=1
        )
    parts = text.split("---", 2)
    if len(parts) < 3:
        raise FrontmatterError(
            "frontmatter.unclosed", "SKILL.md frontmatter not properly closed with ---", line=1
        )
    return parts[1], parts[2].strip()


def _split_lenient(text: str) -> tuple[str, str]:
    first_end = text.find("\n")
    first = text if first_end < 0 else text[:first_end]
    if first.rstrip() != "---":
        raise FrontmatterError(
            "frontmatter.missing", "SKILL.md must start with YAML frontmatter (---)", line=1
        )
    match = _CLOSING_FENCE.search(text, first_end)
    if first_end < 0 or match is None:
        raise FrontmatterError(
            "frontmatter.unclosed", "SKILL.md frontmatter not properly closed with ---", line=1
        )
    return text[first_end + 1 : match.start() + 1], text[match.end() :]


_CLOSING_FENCE: Final = re.compile(r"\n---[ \t]*(?:\n|\Z)")

# --- fast path -------------------------------------------------------------------------------
# Most frontmatter is flat `key: value` lines plus one nested `metadata:` map. Parsing those by
# hand is ~10x faster than libyaml and matters at 10,000 skills. Anything the simple grammar does
# not recognise returns None and goes through the YAML loader, so results never differ.

_PLAIN_FORBIDDEN_START: Final = frozenset("-?:,[]{}#&*!|>'\"%@`")


_COMMON_KEYS: Final = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "version",
        "author",
        "tags",
        "triggers",
        "argument-hint",
        "user-invocable",
        "disable-model-invocation",
        "when_to_use",
    }
)


# Printable ASCII and the line end: what is left after deleting them is not printable.
_PRINTABLE_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\n"


def _simple_text(fm_text: str) -> bool:
    """Whole-text checks, in C: a comment, a tab or a control character anywhere sends the
    text to the YAML loader."""
    if "#" in fm_text and (" #" in fm_text or "\n#" in fm_text or fm_text.startswith("#")):
        return False
    if fm_text.isascii():
        # The same test as isprintable's below for ASCII, at a third of the cost.
        return not fm_text.encode().translate(None, _PRINTABLE_ASCII)
    return fm_text.replace("\n", "").isprintable()


def _simple_scalar(value: str) -> str | None:
    """A ``key: value`` line's value (stripped, not empty), or None outside the grammar."""
    if not value:
        return None
    first = value[0]
    if first == '"' or first == "'":
        if len(value) < 2 or value[-1] != first:
            return None
        inner = value[1:-1]
        return None if first in inner or "\\" in inner else inner
    if first in _PLAIN_FORBIDDEN_START or value[-1] == ":" or ": " in value:
        return None
    # Strict mode reads a plain `<<` as strictyaml does: not a string.
    return None if value == "<<" else value


def _simple_key(key: str) -> bool:
    if key in _COMMON_KEYS:
        return True
    return bool(key) and key.isascii() and key[0] != "-" and key.replace("-", "_").isidentifier()


def _parse_simple(
    fm_text: str, first_line: int = 0
) -> tuple[dict[str, YamlValue], dict[str, int]] | None:
    """``(data, lines)`` of frontmatter in the simple grammar (lines counted from
    ``first_line``), or None to hand it to the YAML loader.

    The grammar: ``key: value`` and ``key:`` lines, and ``  key: value`` lines (two spaces)
    under a ``key:`` line; keys ASCII identifiers (``-`` allowed after the first character);
    a value plain (not starting with an indicator, holding no ``": "``, not ending with
    ``:``, not a bare ``<<`` — strict mode reads that as strictyaml does: not a string) or
    quoted without that quote or a backslash inside; no comments, tabs or control
    characters; no key given twice. One loop, no call per line: this runs for every skill.
    """
    if not _simple_text(fm_text):
        return None
    data: dict[str, YamlValue] = {}
    rows: dict[str, int] = {}
    submap: dict[str, YamlValue] | None = None  # the map an indented line may add to
    open_key = ""  # a top-level key written with no value: it may own a submap
    row = first_line - 1
    for line in fm_text.split("\n"):
        row += 1
        if not line or line.isspace():
            continue
        nested = line[0] == " "
        if nested:
            if not open_key or line[1] != " " or line[2] == " ":
                return None
            line = line[2:]
        key, sep, value = line.partition(": ")
        if sep:
            scalar = _simple_scalar(value.strip(" "))
            if scalar is None:
                return None
            value = scalar
        else:
            key = line.rstrip(" ")
            if nested or key[-1] != ":":
                return None
            key = key[:-1]
        if not _simple_key(key):
            return None
        if nested:
            if submap is None:
                submap = data[open_key] = {}
            elif key in submap:
                return None
            submap[key] = value
        elif key in data:
            return None
        else:
            data[key] = value
            rows[key] = row
            open_key, submap = ("" if sep else key), None
    if not data:
        return None  # an empty document is not a mapping: let the YAML path say so
    return data, rows


# --- YAML path -------------------------------------------------------------------------------


def _yaml_error(exc: YamlError, first_line: int) -> FrontmatterError:
    line = exc.line + first_line if exc.line is not None else None
    return FrontmatterError("frontmatter.yaml", f"Invalid YAML in frontmatter: {exc}", line=line)


def _parse_yaml(fm_text: str, body: str, *, first_line: int, strict: bool) -> Frontmatter:
    if strict:
        _check_strict_subset(fm_text, first_line)
    try:
        node = compose(fm_text, flavour="strict" if strict else "strings")
    except YamlTooDeepError as exc:
        raise FrontmatterError(
            "frontmatter.too_deep", f"Frontmatter refused: {exc}", line=exc.line + first_line
        ) from None
    except YamlTooComplexError as exc:
        raise FrontmatterError(
            "frontmatter.too_complex", f"Frontmatter refused: {exc}", line=first_line
        ) from None
    except YamlError as exc:
        raise _yaml_error(exc, first_line) from None
    builder = _Builder(first_line, strict=strict)
    if not isinstance(node, yaml.MappingNode):
        if strict and node is not None:
            builder.value(node)  # strictyaml reports what is wrong inside before the shape
        raise FrontmatterError(
            "frontmatter.not_mapping", "SKILL.md frontmatter must be a YAML mapping", line=1
        )
    data = builder.mapping(node)
    lines = {
        str(key.value): key.start_mark.line + first_line
        for key, _ in node.value
        if isinstance(key, yaml.ScalarNode)
    }
    return Frontmatter(
        data=data,
        body=body,
        lines=lines,
        text=fm_text,
        duplicate_keys=tuple(builder.top_duplicates),
    )


def _check_strict_subset(fm_text: str, first_line: int) -> None:
    """Refuse the YAML features strictyaml refuses, with its error family's wording."""
    try:
        for event in parse_events(fm_text):
            problem = _strict_problem(event)
            if problem:
                line = event.start_mark.line + first_line if event.start_mark else None
                raise FrontmatterError(
                    "frontmatter.yaml", f"Invalid YAML in frontmatter: {problem}", line=line
                )
    except YamlError as exc:
        raise _yaml_error(exc, first_line) from None


def _strict_problem(event: yaml.Event) -> str | None:
    if isinstance(event, yaml.AliasEvent):
        return "aliases are not allowed"
    if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
        return "anchors are not allowed"
    if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent) and event.tag is not None:
        return f"tags are not allowed ({event.tag})"  # even the non-specific `!`, as strictyaml
    if isinstance(event, yaml.CollectionStartEvent) and event.flow_style:
        return "flow style collections ([...] and {...}) are not allowed"
    return None


class _Builder:
    """Turns composed nodes into strings, lists and dicts, counting nodes against aliases."""

    def __init__(self, first_line: int, *, strict: bool) -> None:
        self.first_line = first_line
        self.strict = strict
        self.count = 0
        self.top_duplicates: list[str] = []
        self.depth = 0

    def value(self, node: yaml.Node) -> YamlValue:
        self.count += 1
        if self.count > MAX_YAML_NODES:
            raise FrontmatterError(
                "frontmatter.too_complex",
                f"frontmatter expands to more than {MAX_YAML_NODES:,} YAML nodes "
                "(alias expansion?)",
                line=node.start_mark.line + self.first_line,
            )
        if isinstance(node, yaml.ScalarNode):
            if node.tag != _STR_TAG and node.tag not in _SCALAR_TAGS:
                raise self._tag_error(node)
            if self.strict and _is_merge_key(node):
                # strictyaml hands back an object for a plain `<<` value, never a string; an
                # empty list fails every string check the same way.
                return []
            return str(node.value)
        if isinstance(node, yaml.SequenceNode):
            if node.tag not in _SEQ_TAGS:
                raise self._tag_error(node)
            return [self.value(child) for child in node.value]
        if isinstance(node, yaml.MappingNode):
            if node.tag not in _MAP_TAGS:
                raise self._tag_error(node)
            return self.mapping(node)
        raise self._tag_error(node)

    def mapping(self, node: yaml.MappingNode) -> dict[str, YamlValue]:
        top = self.depth == 0
        self.depth += 1
        out: dict[str, YamlValue] = {}
        merged: list[dict[str, YamlValue]] | None = None
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise FrontmatterError(
                    "frontmatter.yaml",
                    "Invalid YAML in frontmatter: mapping keys must be plain strings",
                    line=key_node.start_mark.line + self.first_line,
                )
            key = str(key_node.value)
            if self.strict and _is_merge_key(key_node):
                if merged is not None:
                    raise _strict_error(key_node, "duplicate key '<<'", self.first_line)
                merged = self._merge_sources(value_node)
                continue
            if key in out:
                if self.strict:
                    raise FrontmatterError(
                        "frontmatter.yaml",
                        f"Invalid YAML in frontmatter: duplicate key {key!r}",
                        line=key_node.start_mark.line + self.first_line,
                    )
                if top:
                    self.top_duplicates.append(key)
            out[key] = self.value(value_node)
        self.depth -= 1
        if self.strict:
            _check_sibling_indentation(node, self.first_line)
            # strictyaml keeps the keys a `<<` merges in, except in the top-level mapping.
            for source in merged if merged is not None and not top else ():
                for key, value in source.items():
                    out.setdefault(key, value)
        return out

    def _merge_sources(self, node: yaml.Node) -> list[dict[str, YamlValue]]:
        sources: list[yaml.Node] = node.value if isinstance(node, yaml.SequenceNode) else [node]
        maps = [source for source in sources if isinstance(source, yaml.MappingNode)]
        if len(maps) != len(sources):
            raise _strict_error(
                node, "expected a mapping or list of mappings for merging", self.first_line
            )
        return [self.mapping(source) for source in maps]

    def _tag_error(self, node: yaml.Node) -> FrontmatterError:
        return FrontmatterError(
            "frontmatter.tag",
            f"Invalid YAML in frontmatter: the tag {node.tag!r} is not allowed "
            "(tags that build objects are never loaded)",
            line=node.start_mark.line + self.first_line,
        )


def _strict_error(node: yaml.Node, problem: str, first_line: int) -> FrontmatterError:
    return FrontmatterError(
        "frontmatter.yaml",
        f"Invalid YAML in frontmatter: {problem}",
        line=node.start_mark.line + first_line,
    )


def _is_merge_key(node: yaml.ScalarNode) -> bool:
    # ruamel.yaml (inside strictyaml) resolves a plain `<<` scalar to the YAML merge tag.
    return node.value == "<<" and node.style is None and node.tag == _STR_TAG


def _check_sibling_indentation(node: yaml.MappingNode, first_line: int) -> None:
    """Refuse sibling map values that start in different columns, as strictyaml does."""
    column = None
    for key_node, value_node in node.value:
        if not isinstance(value_node, yaml.MappingNode) or (
            isinstance(key_node, yaml.ScalarNode) and _is_merge_key(key_node)
        ):
            continue
        if column is None:
            column = value_node.start_mark.column
        elif value_node.start_mark.column != column:
            raise _strict_error(
                value_node,
                "found mapping with indentation inconsistent with previous mapping",
                first_line,
            )
