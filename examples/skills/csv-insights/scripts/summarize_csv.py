#!/usr/bin/env python3
"""Profile a CSV file: shape, inferred column types, missing values, numeric stats, top values.

Usage: python3 summarize_csv.py data.csv [--out out/summary.md] [--json] [--delimiter ';']
Exit codes: 0 ok, 1 unreadable or empty data, 2 bad usage (e.g. the file does not exist).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from collections import Counter
from datetime import date, datetime
from pathlib import Path
from typing import Any

MISSING = {"", "na", "n/a", "nan", "null", "none", "-"}
INT_RE = re.compile(r"[+-]?\d+")
FLOAT_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def parse_date(value: str) -> date | None:
    """Return a date for ISO-8601 dates/datetimes (2024-03-01, 2024-03-01T10:00), else None."""
    if not re.match(r"\d{4}-\d{2}-\d{2}", value):
        return None
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        return None


def infer_type(values: list[str]) -> str:
    if not values:
        return "empty"
    if all(INT_RE.fullmatch(v) for v in values):
        return "int"
    if all(FLOAT_RE.fullmatch(v) for v in values):
        return "float"
    if all(parse_date(v) for v in values):
        return "date"
    return "text"


def profile_column(name: str, cells: list[str], top: int) -> dict[str, Any]:
    present = [c.strip() for c in cells if c.strip().lower() not in MISSING]
    kind = infer_type(present)
    info: dict[str, Any] = {
        "name": name,
        "type": kind,
        "missing": len(cells) - len(present),
        "distinct": len(set(present)),
    }
    if kind in ("int", "float"):
        nums: list[float] = [int(v) if kind == "int" else float(v) for v in present]
        info.update(min=min(nums), max=max(nums), mean=round(sum(nums) / len(nums), 4))
    elif kind == "date":
        dates = [d for d in map(parse_date, present) if d]
        info.update(min=min(dates).isoformat(), max=max(dates).isoformat())
    elif kind == "text":
        info["top_values"] = [[v, n] for v, n in Counter(present).most_common(top)]
    return info


def read_rows(path: Path, delimiter: str | None) -> tuple[list[list[str]], int]:
    """Decode as UTF-8 (replacing bad bytes) and return (rows, number of replaced characters)."""
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    if not delimiter:
        try:
            delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if any(r)]
    return rows, text.count("\ufffd")


def summarize(path: Path, delimiter: str | None, top: int) -> dict[str, Any]:
    rows, replaced = read_rows(path, delimiter)
    if not rows:
        raise ValueError(f"{path} is empty: no header row found")
    header = [h.strip() or f"column_{i + 1}" for i, h in enumerate(rows[0])]
    body = rows[1:]
    width = len(header)
    ragged = sum(1 for r in body if len(r) != width)
    padded = [(r + [""] * width)[:width] for r in body]
    columns = [profile_column(h, [r[i] for r in padded], top) for i, h in enumerate(header)]
    return {
        "file": str(path),
        "rows": len(body),
        "columns": width,
        "ragged_rows": ragged,
        "replaced_characters": replaced,
        "profile": columns,
    }


def to_markdown(s: dict[str, Any]) -> str:
    out = [f"# CSV summary: {Path(s['file']).name}", ""]
    out += [f"- Rows: {s['rows']} (excluding header)", f"- Columns: {s['columns']}"]
    if not s["rows"]:
        out.append("- Note: header only, no data rows")
    if s["ragged_rows"]:
        out.append(f"- Warning: {s['ragged_rows']} row(s) had the wrong number of fields")
        out.append("  (short rows padded as missing, extra fields ignored)")
    if s["replaced_characters"]:
        out.append(f"- Warning: {s['replaced_characters']} invalid UTF-8 sequence(s) replaced")
    out += ["", "| column | type | missing | distinct | min | max | mean |", "|---" * 7 + "|"]
    for c in s["profile"]:
        cells = [c["name"], c["type"], c["missing"], c["distinct"]]
        cells += [c.get(k, "") for k in ("min", "max", "mean")]
        out.append("| " + " | ".join(str(x).replace("|", "\\|") for x in cells) + " |")
    for c in s["profile"]:
        if c.get("top_values"):
            out += ["", f"## Top values: {c['name']}", ""]
            out += [f"- `{v}`: {n}" for v, n in c["top_values"]]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Profile a CSV file (stdlib only).")
    parser.add_argument("csv_path", type=Path, help="CSV file to profile")
    parser.add_argument("--out", type=Path, help="write the report here instead of stdout")
    parser.add_argument("--json", action="store_true", help="emit JSON instead of Markdown")
    parser.add_argument("--delimiter", help="field delimiter (default: sniffed, else comma)")
    parser.add_argument("--top", type=int, default=5, help="top values per text column (5)")
    args = parser.parse_args(argv)
    if not args.csv_path.is_file():
        parser.error(f"not a file: {args.csv_path}")
    if args.delimiter is not None and len(args.delimiter) != 1:
        parser.error("--delimiter must be a single character")
    try:
        summary = summarize(args.csv_path, args.delimiter, max(args.top, 1))
    except (OSError, ValueError, csv.Error) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    report = json.dumps(summary, indent=2) + "\n" if args.json else to_markdown(summary)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
