"""Answer rubrics: checks on a run's final answer, so an eval says whether the skill was used
well, not only whether it was loaded.

A case's ``expected_answer`` holds any of:

* ``contains``: a string, or a list of strings that must all appear in the answer;
* ``regex``: a Python regular expression that must match somewhere in the answer
  (:func:`re.search`);
* ``json_schema``: a JSON Schema the answer must satisfy as JSON — the whole answer, or else
  the first fenced code block in it (models often wrap JSON in one). Validated with the
  ``jsonschema`` package (the ``evals`` extra), imported only when a case has a schema;
* ``ignore_case``: ``contains`` and ``regex`` ignore case (default false).

:meth:`AnswerRubric.check` returns what failed, one line per failed check (empty: it passes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from skillshelf.errors import MissingExtraError, clip

__all__ = ["AnswerRubric", "check_schema"]

_FENCED: Final = re.compile(r"```[^\n`]*\n(.*?)\n?```", re.DOTALL)
_SHOWN_CHARS: Final = 80  # of a missing string or a pattern, in a failure line


@dataclass(frozen=True, slots=True)
class AnswerRubric:
    """What a case's final answer must satisfy (see the module docstring).

    Attributes:
        contains: Strings that must all appear.
        regex: A pattern that must match somewhere.
        json_schema: A schema the answer, read as JSON, must satisfy.
        ignore_case: Whether ``contains`` and ``regex`` ignore case.
    """

    contains: tuple[str, ...] = ()
    regex: str | None = None
    json_schema: Mapping[str, Any] | None = field(default=None)
    ignore_case: bool = False

    def check(self, answer: str) -> tuple[str, ...]:
        """What ``answer`` fails, one line per failed check; empty when it passes."""
        problems: list[str] = []
        folded = answer.casefold() if self.ignore_case else answer
        for wanted in self.contains:
            if (wanted.casefold() if self.ignore_case else wanted) not in folded:
                problems.append(f"does not contain {clip(wanted, _SHOWN_CHARS)!r}")
        if self.regex is not None:
            flags = re.IGNORECASE if self.ignore_case else 0
            if re.search(self.regex, answer, flags) is None:
                problems.append(f"does not match /{clip(self.regex, _SHOWN_CHARS)}/")
        if self.json_schema is not None:
            problems.extend(_schema_problems(self.json_schema, answer))
        return tuple(problems)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.contains:
            out["contains"] = list(self.contains)
        if self.regex is not None:
            out["regex"] = self.regex
        if self.json_schema is not None:
            out["json_schema"] = dict(self.json_schema)
        if self.ignore_case:
            out["ignore_case"] = True
        return out


def _validator(schema: Mapping[str, Any]) -> Any:
    try:
        from jsonschema import validators
    except ImportError as exc:
        missing = MissingExtraError.from_import_error(exc, feature="An answer's json_schema")
        if missing is None:
            raise
        raise missing from None
    return validators.validator_for(schema)


def check_schema(schema: Mapping[str, Any]) -> str | None:
    """None when ``schema`` is a valid JSON Schema, else why not.

    Raises:
        MissingExtraError: The ``jsonschema`` package is not installed.
    """
    cls = _validator(schema)  # first: it says which extra to install
    from jsonschema.exceptions import SchemaError

    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path)
        return clip(f"{where + ': ' if where else ''}{exc.message}", 300)
    return None


def _schema_problems(schema: Mapping[str, Any], answer: str) -> list[str]:
    value, found = _as_json(answer)
    if not found:
        return ["is not JSON (neither the whole answer nor its first fenced code block)"]
    errors = sorted(
        _validator(schema)(schema).iter_errors(value), key=lambda e: (list(e.path), e.message)
    )
    return [clip(f"JSON at {_pointer(error.path)}: {error.message}", 300) for error in errors[:3]]


def _as_json(answer: str) -> tuple[Any, bool]:
    """The answer as JSON: the whole of it, or else its first fenced code block."""
    candidates = [answer.strip()]
    fenced = _FENCED.search(answer)
    if fenced is not None:
        candidates.append(fenced[1].strip())
    for text in candidates:
        try:
            return json.loads(text), True
        except ValueError:
            continue
    return None, False


def _pointer(path: Any) -> str:
    parts = [str(part) for part in path]
    return "/" + "/".join(parts) if parts else "the top"
