"""``experiments.studies.versus_versions``: a dmc network against a fixed agent across observation versions."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from experiments.studies import versus_versions
from tests.dmc_helpers import random_networks


def test_a_version_0_network_plays_the_same_games_in_a_version_1_run(tmp_path: Path) -> None:
    """Handed the leading part of version 1's observation, a version-0 network plays as on version 0's."""
    path = str(random_networks("grid", {"board_size": 7}, tmp_path, 1)[0])
    early = versus_versions.play("grid", path, "greedy", 12, 3, {"board_size": 7})
    late = versus_versions.play("grid", path, "greedy", 12, 3, {"board_size": 7, "obs_version": 1})
    assert early == late
    assert early["games"] == 24 == early["wins"] + early["draws"] + early["losses"]
    lo, hi = early["ci95"]
    assert 0 <= lo <= early["score"] <= hi <= 1


def test_a_network_of_version_1_meets_the_version_0_opponent_and_bad_input_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options = {"board_size": 7, "obs_version": 1}
    path = str(random_networks("grid", options, tmp_path, 1)[0])
    result = versus_versions.play("grid", path, "greedy", 6, 0, {"board_size": 7})
    assert result["observation_version"] == 1 and result["games"] == 12
    for argv, named in [
        (["grid", str(tmp_path / "missing.zip"), "greedy", "--deals", "2"], "missing.zip"),  # bad input: one line
        (["walls", path, "greedy"], "invalid choice"),
        (["grid", path, "greedy", "--deals", "0"], "--deals"),
    ]:
        with pytest.raises(SystemExit) as bad:
            versus_versions.main(argv)
        assert bad.value.code == 2
        err = capsys.readouterr().err
        assert named in err and "Traceback" not in err
