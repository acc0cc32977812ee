"""skills-ref 0.1.1's own test suite passes against skillshelf's drop-in.

The suite is downloaded from the package registry at test time (never stored in this repository)
and run in a subprocess in which a generated ``skills_ref`` package re-exports
:mod:`skillshelf.compat.skills_ref` module by module.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Final

import pytest

from skillshelf.compat.skills_ref import SKILLS_REF_MODULES, SKILLS_REF_VERSION

pytestmark = pytest.mark.network

_REPO: Final = Path(__file__).resolve().parents[2]
_SRC: Final = _REPO / "src"
_REQUIREMENT: Final = f"skills-ref=={SKILLS_REF_VERSION}"
_EXPECTED_SUMMARY: Final = "40 passed"
# One source distribution plus its build backend for the metadata step, over a slow link.
_DOWNLOAD_TIMEOUT_S: Final = 300
# The reference suite runs in about a second; anything near this limit is hung.
_SUITE_TIMEOUT_S: Final = 300


def _download_sdist(dest: Path) -> Path | str:
    """Download the source distribution; on failure return why."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:"]
    cmd += ["--disable-pip-version-check", _REQUIREMENT, "-d", str(dest)]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=_DOWNLOAD_TIMEOUT_S, check=False
        )
        problem = proc.stderr.strip()[-2000:] if proc.returncode else ""
    except subprocess.TimeoutExpired:
        problem = f"no answer within {_DOWNLOAD_TIMEOUT_S} s"
    sdists = sorted(dest.glob("*.tar.gz"))
    if problem or len(sdists) != 1:
        return (
            f"Cannot download the {_REQUIREMENT} source distribution from the package registry "
            f"(needed to run skills-ref's own tests against the drop-in): "
            f"{problem or 'no single .tar.gz was saved'}"
        )
    return sdists[0]


def _extract_tests(sdist: Path, dest: Path) -> Path:
    with tarfile.open(sdist) as tar:
        members = [
            m for m in tar.getmembers() if m.isfile() and Path(m.name).parts[1:2] == ("tests",)
        ]
        tar.extractall(dest, members=members, filter="data")
    (tests,) = dest.glob("*/tests")
    return tests


def _write_shim(dest: Path) -> Path:
    package = dest / "skills_ref"
    package.mkdir(parents=True)
    for module, names in SKILLS_REF_MODULES.items():
        lines = [
            f'"""skills_ref.{module.removeprefix("__init__") or "(package)"}: skillshelf shim."""',
            f"from skillshelf.compat.skills_ref import {', '.join(names)}",
            f"__all__ = {list(names)!r}",
        ]
        if module == "__init__":
            lines.append(f"__version__ = {SKILLS_REF_VERSION!r}")
        (package / f"{module}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dest


@pytest.fixture(scope="session")
def reference_suite(tmp_path_factory: pytest.TempPathFactory) -> Path | str:
    """skills-ref's ``tests/`` directory, downloaded once per session (or why it could not be)."""
    sdist = _download_sdist(tmp_path_factory.mktemp("skills-ref-sdist"))
    if isinstance(sdist, str):
        return sdist
    return _extract_tests(sdist, tmp_path_factory.mktemp("skills-ref-src"))


def _shim_env(shim: Path) -> dict[str, str]:
    paths = [str(shim), str(_SRC)]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def test_skills_ref_suite_passes_against_the_drop_in(
    reference_suite: Path | str, tmp_path: Path
) -> None:
    if isinstance(reference_suite, str):
        # In CI an unreachable registry must fail the run, not pass quietly as a skip.
        if os.environ.get("CI"):
            pytest.fail(reference_suite, pytrace=False)
        pytest.skip(reference_suite)
    shim = _write_shim(tmp_path / "shim")
    env = _shim_env(shim)
    # The real skills-ref may be installed too: prove the shim is what the suite imports.
    where = subprocess.run(
        [sys.executable, "-c", "import skills_ref.parser as m; print(m.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=_SUITE_TIMEOUT_S,
        check=True,
    )
    assert Path(where.stdout.strip()).is_relative_to(shim), where.stdout
    cmd = [sys.executable, "-m", "pytest", str(reference_suite), "-q", "-p", "no:cacheprovider"]
    # Neither this repository's pytest options nor its rootdir apply to the reference suite.
    cmd += ["-c", os.devnull, "--rootdir", str(reference_suite.parent)]
    proc = subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=env,
        cwd=reference_suite.parent,
        timeout=_SUITE_TIMEOUT_S,
        check=False,
    )
    report = proc.stdout[-4000:] + proc.stderr[-2000:]
    assert proc.returncode == 0, report
    assert re.search(rf"\b{_EXPECTED_SUMMARY}\b", proc.stdout), report
