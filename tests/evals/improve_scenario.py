"""A small catalog with one planted bad description, its cases and a scripted proposer: the
scenario the ``improve`` tests run end to end with ``baseline:search`` as the evaluated model."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillshelf.models import ModelRequest
from skillshelf.testing import ScriptedModel, make_skill, reply

BAD = "Helps with documents."
GOOD = (
    "Fills in PDF form fields and flattens the filled PDF form. Use when the user asks to "
    "fill a PDF form, complete form fields in a PDF, or flatten a PDF form."
)
# Steals the CSV requests: kept only if nothing else's held-out F1 falls, so it is rejected.
GREEDY = (
    "Fills PDF form fields, and summarises CSV files: columns, statistics, profile of a CSV "
    "dataset. Use for a PDF form or any CSV file."
)

SKILLS = {
    "csv-insights": (
        "Profiles CSV files: column types, missing values and summary statistics. Use when "
        "the user asks to summarise, profile or explore a CSV dataset."
    ),
    "commit-message": (
        "Writes git commit messages from staged changes. Use when the user asks for a commit "
        "message or to describe staged git changes."
    ),
    "docfill": BAD,
}

CASES: list[dict[str, Any]] = [
    {
        "id": "pdf-1",
        "query": "Fill the PDF form fields in application.pdf",
        "expected_skill": "docfill",
    },
    {
        "id": "pdf-2",
        "query": "Please fill this PDF form with my address",
        "expected_skill": "docfill",
    },
    {
        "id": "pdf-3",
        "query": "Flatten the filled PDF form before I send it",
        "expected_skill": "docfill",
    },
    {"id": "pdf-4", "query": "Complete the form fields of tax.pdf", "expected_skill": "docfill"},
    {"id": "csv-1", "query": "Profile the columns of sales.csv", "expected_skill": "csv-insights"},
    {
        "id": "csv-2",
        "query": "Summarise the CSV dataset orders.csv",
        "expected_skill": "csv-insights",
    },
    {
        "id": "csv-3",
        "query": "Explore missing values in this CSV file",
        "expected_skill": "csv-insights",
    },
    {
        "id": "git-1",
        "query": "Write a commit message for my staged changes",
        "expected_skill": "commit-message",
    },
    {
        "id": "git-2",
        "query": "Describe the staged git changes as a commit message",
        "expected_skill": "commit-message",
    },
    {"id": "none-1", "query": "What is the weather in Paris?", "expected_skill": None},
    {"id": "none-2", "query": "Tell me a joke about cats", "expected_skill": None},
]


def make_catalog(root: Path) -> Path:
    """The skills under ``root/skills``; docfill is written by hand, with a comment and a
    plain description, to show ``--write`` keeps the rest of the file as it was."""
    skills = root / "skills"
    for name, description in SKILLS.items():
        if name == "docfill":
            raw = (
                "---\n"
                "name: docfill  # the folder's name\n"
                f"description: {description}\n"
                "license: Apache-2.0\n"
                "metadata:\n"
                "  version: '1.0'\n"
                "---\n"
                "# PDF forms\n\nRun `scripts/fill.py` with the field values.\n"
            )
            make_skill(skills, name, raw=raw)
        else:
            make_skill(skills, name, description)
    return skills


# Hobbies: words no case uses, so padding skills change the catalog, not the right answers.
_HOBBIES = (  # noqa: SIM905 - a long word list reads best as one string
    "garden recipe bicycle violin pottery sailing knitting chess hiking birding baking camping "
    "fishing painting yoga tennis skiing rowing climbing surfing dancing singing poetry "
    "cycling brewing quilting origami juggling archery fencing"
).split()


def pad_catalog(skills: Path, count: int) -> None:
    """Add ``count`` skills about hobbies (up to 870), as a large real collection would: the
    catalog no longer shows every description in full at the default budget."""
    pairs = itertools.islice(itertools.permutations(_HOBBIES, 2), count)
    for i, (a, b) in enumerate(pairs):
        make_skill(
            skills,
            f"hobby-{i:03d}-{a}",
            f"Plans {a} sessions and {b} outings for families. Use when the user asks about "
            f"{a} with {b} or weekend {a} ideas.",
        )


def write_cases(path: Path, cases: Sequence[dict[str, Any]] = CASES) -> Path:
    path.write_text(json.dumps(list(cases)), encoding="utf-8")
    return path


def proposer(*descriptions: str) -> ScriptedModel:
    """A proposer that answers its n-th request with the n-th description."""
    asked: list[str] = []

    def answer(request: ModelRequest) -> Any:
        user = str(request.messages[-1]["content"])
        asked.append(user)
        index = min(len(asked), len(descriptions)) - 1
        return reply(f"Here it is:\n<description>{descriptions[index]}</description>")

    return ScriptedModel(answer, name="scripted-proposer")
