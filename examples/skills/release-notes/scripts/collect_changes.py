#!/usr/bin/env python3
"""Group Conventional-Commit subjects from `git log` output into release-note sections.

Input (a file or stdin) is either one commit per line, as produced by
  git log --pretty=format:'%h %s' v1.2.0..HEAD      (or --oneline)
or git's default multi-line format (`commit <sha>` blocks), which also exposes
`BREAKING CHANGE:` footers. Output is Markdown on stdout or in --out.
Exit codes: 0 ok, 1 no commits found, 2 bad usage.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

SUBJECT_RE = re.compile(
    r"^(?P<type>[a-zA-Z]+)(?:\((?P<scope>[^()]+)\))?(?P<bang>!)?:\s+(?P<desc>.+)$"
)
ONELINE_RE = re.compile(r"^(?P<hash>[0-9a-f]{7,40})\s+(?:\([^)]*\)\s+)?(?P<subject>.+)$")
COMMIT_RE = re.compile(r"^commit (?P<hash>[0-9a-f]{7,40})\b")
MERGE_RE = re.compile(r"^Merge (pull request|branch|remote-tracking branch) ")
SECTIONS = {
    "feat": "Features",
    "fix": "Bug fixes",
    "perf": "Performance",
    "revert": "Reverts",
    "docs": "Documentation",
}
INTERNAL = {
    "refactor": "Refactoring",
    "build": "Build and dependencies",
    "ci": "Continuous integration",
    "test": "Tests",
    "style": "Code style",
    "chore": "Chores",
}


@dataclass
class Commit:
    hash: str
    subject: str
    breaking_note: str = ""


def parse_log(text: str) -> list[Commit]:
    """Parse one-line or default (multi-line) `git log` output into commits."""
    lines = text.splitlines()
    if not any(COMMIT_RE.match(line) for line in lines):
        matches = [(ONELINE_RE.match(x), x) for x in (raw.strip() for raw in lines) if x]
        return [Commit(m["hash"][:7], m["subject"]) if m else Commit("", x) for m, x in matches]
    commits: list[Commit] = []
    message: list[str] = []
    current: Commit | None = None
    for line in [*lines, "commit 0000000"]:
        m = COMMIT_RE.match(line)
        if m:
            if current and message:
                current.subject = message[0]
                notes = [x.split(":", 1)[1].strip() for x in message if is_breaking_footer(x)]
                current.breaking_note = " ".join(notes)
                commits.append(current)
            current, message = Commit(m["hash"][:7], ""), []
        elif line.startswith("    ") and line.strip():
            message.append(line.strip())
    return commits


def is_breaking_footer(line: str) -> bool:
    return line.startswith(("BREAKING CHANGE:", "BREAKING-CHANGE:"))


def render(commits: list[Commit], version: str, date: str, include_all: bool) -> str:
    titles = {**SECTIONS, **INTERNAL} if include_all else SECTIONS
    groups: dict[str, list[str]] = {key: [] for key in ["breaking", *titles, "other"]}
    hidden = 0
    for c in commits:
        if MERGE_RE.match(c.subject):
            continue
        ref = f" ({c.hash})" if c.hash else ""
        m = SUBJECT_RE.match(c.subject)
        if not m:
            groups["other"].append(f"- {c.subject}{ref}")
            continue
        kind = m["type"].lower()
        scope = f"**{m['scope']}:** " if m["scope"] else ""
        entry = f"- {scope}{m['desc']}{ref}"
        if m["bang"] or c.breaking_note:
            groups["breaking"].append(f"- {scope}{c.breaking_note or m['desc']}{ref}")
        if kind in titles:
            groups[kind].append(entry)
        elif kind in INTERNAL:
            hidden += 1
        else:
            groups["other"].append(entry)
    heading = f"## {version}" + (f" ({date})" if date else "")
    out = [heading, ""]
    names = {"breaking": "Breaking changes", **titles, "other": "Other changes"}
    for key, entries in groups.items():
        if entries:
            out += [f"### {names[key]}", "", *entries, ""]
    if hidden:
        out += [f"<!-- {hidden} internal commit(s) omitted; rerun with --all to list them -->", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Group Conventional Commits into release notes.")
    parser.add_argument("log", nargs="?", default="-", help="git log output file ('-' = stdin)")
    parser.add_argument("--version", default="Unreleased", help="release heading (Unreleased)")
    parser.add_argument("--date", default="", help="release date shown next to the version")
    parser.add_argument("--all", action="store_true", help="also list refactor/build/ci/test/...")
    parser.add_argument("--out", type=Path, help="write Markdown here instead of stdout")
    args = parser.parse_args(argv)
    if args.log == "-":
        if sys.stdin.isatty():
            parser.error("no input: pass a log file or pipe `git log --pretty=format:'%h %s'`")
        text = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    else:
        path = Path(args.log)
        if not path.is_file():
            parser.error(f"not a file: {path}")
        text = path.read_bytes().decode("utf-8", errors="replace")
    commits = parse_log(text)
    if not commits:
        print("error: no commits found in the input", file=sys.stderr)
        return 1
    notes = render(commits, args.version, args.date, args.all)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(notes, encoding="utf-8")
        print(f"wrote {args.out} ({len(commits)} commits)", file=sys.stderr)
    else:
        sys.stdout.write(notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
