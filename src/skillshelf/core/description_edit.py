"""Replacing the ``description`` value of a SKILL.md and nothing else (pure).

``skillshelf improve --write`` rewrites descriptions in files people maintain by hand, so
every byte outside the old value stays as it was: the other keys, their quoting and order,
comments, the body, a UTF-8 BOM and CRLF line ends. The value's span comes from the YAML
parser's marks (:mod:`~skillshelf.core.yaml_loader`, the one YAML entry point); the new value
keeps a plain style when it reads back as the same string, else it is double-quoted with every
``"``, ``\\`` and control character escaped. The result is parsed again and must give the old
frontmatter with only the description changed, or nothing is returned.
"""

from __future__ import annotations

from typing import Final

import yaml

from skillshelf.core.frontmatter import Frontmatter, FrontmatterError, parse_frontmatter
from skillshelf.core.yaml_loader import YAMLError, compose
from skillshelf.errors import SkillshelfError

__all__ = ["DescriptionEditError", "quote_yaml", "replace_description"]

_BOM: Final = "\ufeff"
_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


class DescriptionEditError(SkillshelfError):
    """The description cannot be replaced without touching anything else."""


def quote_yaml(value: str) -> str:
    """``value`` as a YAML double-quoted scalar that reads back as exactly ``value``."""
    out = []
    for char in value:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif not char.isprintable() or char == _BOM:
            code = ord(char)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def replace_description(text: str, description: str) -> str:
    """The SKILL.md ``text`` with its ``description`` value replaced by ``description``.

    Raises:
        DescriptionEditError: Text that is not UTF-8 (lone surrogates), no parsable
            frontmatter, no (or a repeated, or a non-string) ``description``, mixed line
            ends, or a result that would not read back as
            the old frontmatter with only the description changed.
    """
    for value, what in ((text, "the file is"), (description, "the new description is")):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise DescriptionEditError(f"{what} not valid UTF-8") from None
    bom = _BOM if text.startswith(_BOM) else ""
    body = text[len(bom) :]
    crlf = "\r\n" in body
    if crlf:
        if body.count("\r") != body.count("\r\n") or body.count("\n") != body.count("\r\n"):
            raise DescriptionEditError("the file mixes line ends; not edited")
        body = body.replace("\r\n", "\n")
    elif "\r" in body:
        raise DescriptionEditError("the file uses CR line ends; not edited")
    edited = _replace(body, description)
    if crlf:
        edited = edited.replace("\n", "\r\n")
    return bom + edited


def _replace(text: str, description: str) -> str:
    before = _frontmatter(text)
    start = text.find("\n") + 1  # lenient frontmatter starts on the second line
    if text[start : start + len(before.text)] != before.text:
        raise DescriptionEditError("the frontmatter does not start on the second line")
    value = _description_node(before.text)
    begin, end = start + value.start_mark.index, start + value.end_mark.index
    old = text[begin:end]
    trailing = old[len(old.rstrip()) :]  # a block scalar's span ends with its line breaks
    rendered = _render(description, plain=not value.style) + trailing
    result = text[:begin] + rendered + text[end:]
    after = _frontmatter(result)
    expected = {**before.data, "description": description}
    if after.data != expected or after.body != before.body:
        raise DescriptionEditError("the edited frontmatter would not read back as written")
    return result


def _frontmatter(text: str) -> Frontmatter:
    try:
        return parse_frontmatter(text, mode="lenient")
    except FrontmatterError as exc:
        raise DescriptionEditError(f"cannot read the frontmatter: {exc.message}") from None


def _description_node(fm_text: str) -> yaml.ScalarNode:
    try:
        node = compose(fm_text, flavour="strings")
    except YAMLError as exc:
        raise DescriptionEditError(f"cannot read the frontmatter: {exc}") from None
    if not isinstance(node, yaml.MappingNode):
        raise DescriptionEditError("the frontmatter is not a mapping")
    found = [
        v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "description"
    ]
    if len(found) != 1:
        problem = "has no description" if not found else "gives description more than once"
        raise DescriptionEditError(f"the frontmatter {problem}")
    value = found[0]
    if not isinstance(value, yaml.ScalarNode) or value.tag != "tag:yaml.org,2002:str":
        raise DescriptionEditError("the description is not a plain string")
    return value


def _render(description: str, *, plain: bool) -> str:
    """Plain when it was plain and reads back the same; double-quoted otherwise."""
    if plain and description == description.strip() and _reads_back_plain(description):
        return description
    return quote_yaml(description)


def _reads_back_plain(value: str) -> bool:
    if not value or not value.isprintable() or " #" in value or ": " in value:
        return False
    try:
        node = compose(f"k: {value}\n", flavour="strings")
    except YAMLError:
        return False
    if not isinstance(node, yaml.MappingNode) or len(node.value) != 1:
        return False
    scalar = node.value[0][1]
    return isinstance(scalar, yaml.ScalarNode) and not scalar.style and scalar.value == value
