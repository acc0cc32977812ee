"""Which module or program a failed command lacked, read from its stderr and exit code.

A skill's script that needs ``pypdf`` or ``gh`` fails in the sandbox when the operator has
not provided it, and the model cannot fix that from inside (no network, a read-only
environment). :func:`find_missing` recognises the usual messages (Python's
``ModuleNotFoundError``, Node's ``Cannot find module``, the shells' ``not found`` and
``command not found``, ``env``'s ``No such file or directory``, exit status 127) so the result
can say what is missing and who must provide it. Pure: text in, values out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from skillshelf.errors import clip

__all__ = ["PACKAGE_HINTS", "Missing", "find_missing", "missing_notes"]

MissingKind = Literal["python-module", "node-module", "program", "unknown"]
# Names are matched from this alphabet only, so what the sandbox printed cannot bring control,
# format or markup characters into the harness's text.
_NAME: Final = r"[\w.+@/-]{1,200}"
_PATTERNS: Final[tuple[tuple[MissingKind, re.Pattern[str]], ...]] = (
    ("python-module", re.compile(rf"ModuleNotFoundError: No module named '({_NAME})'", re.ASCII)),
    ("node-module", re.compile(rf"Error: Cannot find module '({_NAME})'", re.ASCII)),
    # dash: "sh: 1: gh: not found"; bash: "bash: line 1: gh: command not found"
    ("program", re.compile(rf"^[^\n]*?: ({_NAME}): (?:command )?not found$", re.M | re.ASCII)),
    # env from a shebang: "/usr/bin/env: 'node': No such file or directory" (‘…’ in UTF-8)
    ("program", re.compile(rf"env: ['‘]({_NAME})['’]: No such file or directory", re.ASCII)),
    # bash: "./x.sh: /usr/bin/perl: bad interpreter: No such file or directory"
    ("program", re.compile(rf": ({_NAME}): bad interpreter: No such file", re.ASCII)),
)
# Where a module's PyPI distribution is named differently (the name to install).
PACKAGE_HINTS: Final = {
    "PIL": "Pillow",
    "yaml": "PyYAML",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "cv2": "opencv-python",
    "bs4": "beautifulsoup4",
    "sklearn": "scikit-learn",
    "fitz": "PyMuPDF",
    "dateutil": "python-dateutil",
    "magic": "python-magic",
    "dotenv": "python-dotenv",
    "jwt": "PyJWT",
    "git": "GitPython",
}
MAX_NOTES: Final = 5
EXIT_NOT_FOUND: Final = 127  # what POSIX shells return for a command they cannot find


@dataclass(frozen=True, slots=True)
class Missing:
    """One module or program a command could not find.

    Attributes:
        kind: ``python-module``, ``node-module``, ``program``, or ``unknown`` (exit status
            127 without a recognised message).
        name: The name as the command's error gave it ("" for ``unknown``).
    """

    kind: MissingKind
    name: str

    def to_dict(self) -> dict[str, str]:
        """The ``--json`` shape."""
        return {"kind": self.kind, "name": self.name}

    def note(self) -> str:
        """What the model reads: what is missing and that the operator must provide it."""
        name = clip(self.name)
        cannot = (
            "it cannot be installed from inside the sandbox (no network, read-only "
            "environment): tell the user the operator must provide it"
        )
        if self.kind == "python-module":
            top = self.name.split(".", 1)[0]
            package = PACKAGE_HINTS.get(top, top)
            return (
                f"Missing runtime: the Python module {name!r} is not installed where the "
                f"command runs; {cannot} (install the package {clip(package)!r} into the "
                "environment skillshelf runs in, or into the container image)."
            )
        if self.kind == "node-module":
            return (
                f"Missing runtime: the Node.js module {name!r} is not installed where the "
                f"command runs; {cannot} (in the container image, or a node_modules folder "
                "shipped with the skill or added as a read-only path)."
            )
        if self.kind == "program":
            return (
                f"Missing runtime: the program {name!r} was not found in the sandbox; "
                f"{cannot} (install it on the host, add its folder as a read-only path, or "
                "use a container image that has it)."
            )
        return (
            "Missing runtime: exit code 127 usually means a program the command started was "
            "not found in the sandbox; check the program name, and if it is right, tell the "
            "user the operator must provide it."
        )


def find_missing(stderr: str, exit_code: int) -> list[Missing]:
    """What a finished command lacked, in the order its stderr names them (no duplicates)."""
    found: list[tuple[int, Missing]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(stderr):
            name = match.group(1)
            if kind == "node-module" and name.startswith((".", "/")):
                continue  # a file of the skill, not a package
            found.append((match.start(), Missing(kind, name)))
    ordered = list(dict.fromkeys(m for _, m in sorted(found, key=lambda pair: pair[0])))
    if not ordered and exit_code == EXIT_NOT_FOUND:
        ordered.append(Missing("unknown", ""))
    return ordered[:MAX_NOTES]


def missing_notes(missing: list[Missing]) -> list[str]:
    """One note per missing module or program."""
    return [m.note() for m in missing]
