"""Where the real skills the tests and benchmarks use live: ``tests/corpus`` in this repository.

Three public collections copied unmodified, each with its licence files and a SOURCE.md naming
the origin repository and commit (see ``tests/corpus/README.md``). The corpus is part of the
repository, so a missing folder is a broken checkout: importing this module fails loudly
instead of letting the tests that need it skip.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

CORPUS: Final = Path(__file__).resolve().parent / "corpus"
ANTHROPIC: Final = CORPUS / "anthropic-skills" / "skills"
OBRA: Final = CORPUS / "obra-superpowers" / "skills"
# Every openai skill sits under a hidden folder (.curated/, .experimental/, .system/).
OPENAI: Final = CORPUS / "openai-skills" / "skills"
COLLECTIONS: Final = ("anthropic-skills", "obra-superpowers", "openai-skills")
COLLECTION_ROOTS: Final = (ANTHROPIC, OBRA, OPENAI)
_REPO: Final = Path(__file__).resolve().parents[1]
# The labelled search queries and the skills they are labelled over (bench/search_quality.py).
SEARCH_QUERIES: Final = _REPO / "bench" / "data" / "search_queries.jsonl"
SEARCH_ROOTS: Final = (
    _REPO / "examples" / "skills",
    _REPO / "examples" / "skills-zh",
    ANTHROPIC,
    OBRA,
    OPENAI / ".curated",
    OPENAI / ".experimental",
    OPENAI / ".system",
)

_missing = [str(root) for root in COLLECTION_ROOTS if not root.is_dir()]
if _missing:
    raise FileNotFoundError(
        f"the skill corpus is part of the repository but {', '.join(_missing)} is missing; "
        "restore it with `git checkout -- tests/corpus`"
    )
