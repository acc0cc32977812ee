"""Hostile YAML texts: nesting past ``MAX_YAML_DEPTH`` and alias amplification.

Each text is a fragment of a mapping (``x: ...`` or several keys), small enough to sit in a
SKILL.md frontmatter under 1 MiB; shared by the hostile-root tests and the every-reader test.
"""

from __future__ import annotations

DEPTHS = [100, 1_000, 10_000]
# A MemoryError-free run of the amplification attack stays far below this (measured: < 5 MiB).
AMPLIFICATION_PEAK_BYTES = 64 << 20


def flow_list(depth: int) -> str:
    return "x: " + "[" * depth + "]" * depth


def flow_map(depth: int) -> str:
    return "x: " + "{a: " * depth + "b" + "}" * depth


def block_sequence(depth: int) -> str:
    # Compact nested block sequences: two characters a level, so 10,000 levels fit in 20 KB.
    return "x:\n" + "- " * depth + "leaf"


def block_map(depth: int) -> str:
    # One space of indentation a level: depth**2 / 2 bytes, so only up to 1,000 levels.
    return "\n".join(" " * i + "k:" for i in range(depth)) + " leaf"


def _deep_cases() -> list[tuple[str, str]]:
    cases = []
    for depth in DEPTHS:
        cases += [
            (f"flow-list-{depth}", flow_list(depth)),
            (f"flow-map-{depth}", flow_map(depth)),
            (f"block-seq-{depth}", block_sequence(depth)),
        ]
        if depth <= 1_000:
            cases.append((f"block-map-{depth}", block_map(depth)))
    return cases


DEEP = _deep_cases()


def amplified_tags() -> str:
    # ~100 KB of text whose tags expand to 9,000 x 90 KB = 810 MB (under the node cap).
    return "a: &a " + "x" * 90_000 + "\ntags: [" + ", ".join(["*a"] * 9_000) + "]"


def amplified_nested() -> str:
    # Nested lists of aliases: 10 x 10 x 10 x 1,000-character strings, under 10,000 nodes.
    lines = ["s: &s " + "y" * 5_000]
    lines.append("l1: &l1 [" + ", ".join(["*s"] * 20) + "]")
    lines.append("l2: &l2 [" + ", ".join(["*l1"] * 20) + "]")
    lines.append("tags: [" + ", ".join(["*l2"] * 20) + "]")
    return "\n".join(lines)


def billion_laughs() -> str:
    lines = ['a0: &a0 "lol"']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\ntags: *a9"


AMPLIFIED = [
    ("amp-tags", amplified_tags()),
    ("amp-nested", amplified_nested()),
    ("amp-laughs", billion_laughs()),
]
