"""Compare the floors pyproject declares with what a lowest-direct install resolved.

    python .ci/floors.py VENV_PYTHON

Prints each direct dependency of the core and the ``dev`` extra with its declared floor and
the installed release; exits 1 when one was installed above its floor (the floor is then
untested: nothing allows it with the rest, so raise it to the release shown).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_LIST = (
    "import json, importlib.metadata as m; "
    "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
)


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    listed = subprocess.run([sys.argv[1], "-c", _LIST], capture_output=True, text=True, check=True)
    versions: dict[str, str] = json.loads(listed.stdout)
    installed = {name.lower().replace("_", "-"): version for name, version in versions.items()}
    problems = 0
    for requirement in wanted:
        match = re.match(r"\s*([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(.*)", requirement)
        assert match, requirement
        name, spec = match.group(1).lower().replace("_", "-"), match.group(2)
        floor = re.search(r"(?:>=|==)\s*([0-9][^,;\s]*)", spec)
        if floor is None:
            continue
        got = installed.get(name)
        ok = got is not None and _same(got, floor.group(1))
        problems += not ok
        print(f"{'ok ' if ok else 'RAISE'}  {name:24} floor {floor.group(1):12} installed {got}")
    return 1 if problems else 0


def _same(installed: str, floor: str) -> bool:
    # 2.3 == 2.3.0: compare release numbers padded with zeros.
    def parts(version: str) -> list[str]:
        release = re.match(r"[0-9]+(?:\.[0-9]+)*", version)
        numbers = (release.group(0) if release else version).split(".")
        return numbers + ["0"] * (4 - len(numbers))

    return installed == floor or parts(installed) == parts(floor)


if __name__ == "__main__":
    sys.exit(main())
