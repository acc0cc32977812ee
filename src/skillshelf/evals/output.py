"""The ``--out`` folder: ``traces/<case-id>-run<k>.jsonl``, ``report.json`` and ``report.md``.

Nothing the user had is lost: a folder that is not empty is used only when it holds the
``report.json`` of an earlier eval, and then only that eval's own files (its report and
``traces/*-run<k>.jsonl``) are replaced; anything else in it stays.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

from skillshelf.errors import SkillshelfError

__all__ = ["OutputDirError", "prepare_out_dir", "write_report"]

REPORT_JSON: Final = "report.json"
REPORT_MD: Final = "report.md"
TRACES: Final = "traces"
_TRACE_FILE = re.compile(r".+-run\d+\.jsonl")


class OutputDirError(SkillshelfError):
    """The output folder cannot be used without losing something."""


def prepare_out_dir(out: Path) -> Path:
    """Make ``out`` ready for a new eval's output; return its traces folder.

    Raises:
        OutputDirError: ``out`` is a file, or a non-empty folder without an earlier eval's
            ``report.json``, or cannot be created.
    """
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"The output folder {str(out)!r} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not _is_eval_report(out / REPORT_JSON):
            raise OutputDirError(
                f"The output folder {str(out)!r} is not empty and holds no report.json from an "
                "earlier skillshelf eval; choose a new or empty folder (nothing was written)"
            )
        _remove_previous(out)
    traces = out / TRACES
    try:
        traces.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputDirError(f"cannot create {str(traces)!r}: {exc}") from None
    return traces


def _is_eval_report(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and {"version", "runs_per_case", "summary"} <= data.keys()


def _remove_previous(out: Path) -> None:
    for name in (REPORT_JSON, REPORT_MD):
        (out / name).unlink(missing_ok=True)
    traces = out / TRACES
    if traces.is_dir():
        for path in traces.iterdir():
            if path.is_file() and _TRACE_FILE.fullmatch(path.name):
                path.unlink()


def write_report(out: Path, report: dict[str, Any], markdown: str) -> None:
    """Write ``report.json`` and ``report.md`` into ``out``.

    Raises:
        OutputDirError: They cannot be written.
    """
    try:
        text = json.dumps(report, indent=2, ensure_ascii=False)
        (out / REPORT_JSON).write_text(text + "\n", encoding="utf-8")
        (out / REPORT_MD).write_text(markdown, encoding="utf-8")
    except OSError as exc:
        raise OutputDirError(f"cannot write the report into {str(out)!r}: {exc}") from None
