"""Terminal play, driven through standard input in a subprocess."""

from __future__ import annotations

import subprocess
import sys

import pytest

import jericho_env


def run_play(args: list[str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jericho_env.play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_a_whole_game_with_bad_input_along_the_way(game: str) -> None:
    script = "help\n\nnot-a-move\n999\nmoves\nboard\n" + "1\n" * 400
    res = run_play([game, "--opponent", "greedy", "--seed", "4"], script)
    out = res.stdout
    assert res.returncode == 0, res.stderr
    assert "Commands:" in out
    assert "type a move's code or number" in out
    assert "'not-a-move' is not a legal move here" in out
    assert "there is no move 999" in out
    assert "== game over ==" in out and "result: " in out
    assert "you play " in out and "player_1 plays " in out


def test_save_png_writes_the_final_table(tmp_path) -> None:
    png = tmp_path / "final.png"
    res = run_play(["castles", "--seed", "1", "--save-png", str(png)], "1\n" * 200)
    assert res.returncode == 0 and "saved the final table" in res.stdout
    from PIL import Image

    with Image.open(png) as im:
        assert im.size[0] > 100 and im.size[1] > 100


def test_moves_can_be_typed_by_code() -> None:
    env = jericho_env.make("castles")
    env.reset(seed=4)
    first = env.unwrapped.action_to_str(env.unwrapped.legal_actions()[0])
    res = run_play(
        ["castles", "--seed", "4", "--seat", str(env.unwrapped.seat_of(env.agent_selection))],
        f"{first.upper()}\nquit\n",
    )
    assert f"you play {first}" in res.stdout
    assert "game abandoned." in res.stdout and res.returncode == 1


def test_end_of_input_leaves_cleanly() -> None:
    res = run_play(["grid", "--seed", "1"], "")
    assert "end of input" in res.stdout and res.returncode == 1


def test_the_seat_sees_only_its_own_hand() -> None:
    res = run_play(["grid", "--seed", "2"], "quit\n")
    env = jericho_env.make("grid")
    env.reset(seed=2)
    hidden = env.unwrapped.state.hands[1]  # the opponent's hand at the start
    assert "player_1: hand 5 hidden cards" in res.stdout
    table = res.stdout.split("your moves:")[0]
    played = res.stdout.split("player_1 plays ")[1].split("@")[0] if "player_1 plays" in res.stdout else None
    from jericho_env.core.cards import card_to_str

    assert not [c for c in map(card_to_str, hidden) if c in table and c != played]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown game id"),
        (["grid", "--opponent", "nosuch"], "unknown agent"),
        (["grid", "--seat", "5"], "--seat 5"),
        (["walls", "--option", "num_players=9"], "num_players"),
    ],
)
def test_bad_arguments(args: list[str], message: str) -> None:
    res = run_play(args, "")
    assert res.returncode == 2 and message in res.stderr
