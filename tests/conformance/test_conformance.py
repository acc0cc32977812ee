"""One table of scenarios, run unchanged through every face (see docs/conformance.md)."""

from __future__ import annotations

import pytest

from conformance.faces import Env
from conformance.scenarios import SCENARIOS, Scenario
from conformance.tables import FACES, KNOWN_BUGS, UNSUPPORTED


def _cases() -> list[object]:
    cases: list[object] = []
    for scenario in SCENARIOS:
        for face in FACES:
            key = (face, scenario.name)
            if key in UNSUPPORTED:
                continue  # listed, with its reason, in docs/conformance.md (test_tables)
            marks = []
            if key in KNOWN_BUGS:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[key]))
            cases.append(pytest.param(face, scenario, id=f"{scenario.name}-{face}", marks=marks))
    return cases


@pytest.mark.parametrize(("face", "scenario"), _cases())
def test_scenario(face: str, scenario: Scenario, env: Env) -> None:
    record = FACES[face]().run(scenario, env)
    assert record.face == face
    scenario.check(record)
