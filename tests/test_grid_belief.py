"""``experiments.studies.grid_belief``: a grid dmc network handed narrowed views of the unseen cards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import jericho_env
from experiments.studies import grid_belief, versus_versions
from tests.dmc_helpers import random_networks

OPTIONS = {"board_size": 7}


def positions(deals: int = 6, steps: int = 9) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(observations of version 1, batched states, movers, legal masks) after ``steps`` moves of random play."""
    env = jericho_env.make_batched("grid", deals, obs_version=1, **OPTIONS)
    obs, mask, player = env.reset(seed=5)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        choice = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, player, _, _ = env.step(choice)
    return np.array(obs), env.states.copy(), np.array(player), np.array(mask, dtype=bool)


def test_a_narrowed_view_shows_exactly_the_kept_cards_unseen() -> None:
    """Keeping the opponent's hand, the view's unseen cards are that hand; keeping all, the view is the row."""
    views = grid_belief.Views(OPTIONS)
    obs, states, movers, _ = positions()
    rows = np.arange(len(obs))
    hands = grid_belief.opponent_hands(states, rows, movers)
    assert hands.sum(axis=1).tolist() == [len(states["hands"][i, 1 - m][: states["hand_len"][i, 1 - m]])
                                          for i, m in enumerate(movers)]  # fmt: skip
    unseen = views.unseen(obs)
    assert (unseen & hands).sum() == hands.sum()  # the opponent's cards are unseen
    assert (unseen.sum(axis=1) > hands.sum(axis=1)).all()  # and others too: the draw pile, the base
    narrow = views.narrowed(obs, hands)
    assert (views.unseen(narrow) == hands).all()
    changed = np.flatnonzero((narrow != obs).any(axis=0))
    assert set(changed.tolist()) <= set(range(views.discard.start, views.discard.stop))
    assert np.array_equal(views.narrowed(obs, np.ones_like(hands)), obs)
    assert (views.hand_sizes(obs) == hands.sum(axis=1)).all()


def test_top_candidates_take_the_highest_unseen_cards() -> None:
    key = np.array([[0.9, 0.1, 0.8, 0.5, 0.2], [0.3, 0.2, 0.1, 0.0, 0.9]])
    unseen = np.array([[False, True, True, True, True], [True, True, False, False, False]])
    out = grid_belief.top_candidates(key, unseen, np.array([2, 5]))
    assert out.tolist() == [[False, False, True, True, False], [True, True, False, False, False]]


def test_ranking_quality_is_one_for_a_belief_that_knows_and_a_half_for_one_that_guesses() -> None:
    hands = np.zeros((2, 52), bool)
    hands[0, [1, 5]] = hands[1, [7]] = True
    unseen = np.zeros((2, 52), bool)
    unseen[:, :10] = True
    perfect = grid_belief.ranking_quality(hands.astype(np.float32), hands, unseen)
    assert perfect["auc"] == 1.0 and perfect["top_h_share"] == 1.0
    assert perfect["uniform_share"] == pytest.approx((2 / 10 + 1 / 10) / 2)
    flat = grid_belief.ranking_quality(np.full((2, 52), 0.5, np.float32), hands, unseen)
    assert flat["auc"] == 0.5


def test_fair_and_all_card_oracle_views_play_the_network_as_it_plays(tmp_path: Path) -> None:
    """The fair view and an oracle that keeps every unseen card both give versus_versions' games exactly; the
    oracle that keeps only the hand plays other games (the network's prior reads the narrowed view)."""
    path = str(random_networks("grid", OPTIONS, tmp_path, 1, prior="greedy-scores")[0])
    plain = versus_versions.play("grid", path, "greedy", 8, 3, dict(OPTIONS))
    keys = ("score", "games", "wins", "draws")
    fair = grid_belief.run(path, "greedy", "fair", 0, "kh", 8, 3, options=dict(OPTIONS))
    everything = grid_belief.run(path, "greedy", "oracle", 52, "kh", 8, 3, options=dict(OPTIONS))
    assert [fair[k] for k in keys] == [everything[k] for k in keys] == [plain[k] for k in keys]
    match = grid_belief.Match(path, "greedy", 3, dict(OPTIONS))
    obs, states, movers, legal = positions(deals=48)
    hands = grid_belief.opponent_hands(states, np.arange(len(obs)), movers)
    fair_moves = match.best(obs, legal, None, "kh")
    assert np.array_equal(fair_moves, match.plan.best(obs[:, : match.size], legal))
    assert legal[np.arange(len(obs)), fair_moves].all()
    told = match.best(obs, legal, hands, "kh")
    assert legal[np.arange(len(obs)), told].all() and not np.array_equal(told, fair_moves)


def test_a_learned_belief_reports_its_figures(tmp_path: Path) -> None:
    path = str(random_networks("grid", OPTIONS, tmp_path, 1, prior="greedy-scores")[0])
    r = grid_belief.run(path, "greedy", "learned", 3, "h", 3, 1, belief_deals=6, belief_epochs=1,
                        options=dict(OPTIONS), belief_seed=4)  # fmt: skip
    b = r["belief"]
    assert b["rows"] > 50 and 0 < b["held_out_bce"] < 2 and 0 < b["uniform_bce"] < 2
    assert 0 <= b["auc"] <= 1 and 0 <= b["top_h_share"] <= 1 and 0 < b["uniform_share"] < 1
    assert r["games"] == 6 == r["wins"] + r["draws"] + (6 - r["wins"] - r["draws"])


def test_bad_input_is_named_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(random_networks("grid", OPTIONS, tmp_path, 2)[0])
    other = str(tmp_path / "n1.zip")
    for argv, named in [
        ([path, "greedy", "--candidates", "psychic"], "invalid choice"),
        ([path, "greedy", "--channels", "s"], "invalid choice"),
        ([path, "greedy", "--extra", "-1"], "--extra"),
        ([path, "greedy", "--deals", "0"], "--deals"),
        ([f"{path}+{other}", "greedy", "--deals", "1"], "not an ensemble"),
        ([str(tmp_path / "missing.zip"), "greedy", "--deals", "1"], "missing.zip"),
    ]:
        with pytest.raises(SystemExit) as bad:
            grid_belief.main(argv)
        assert bad.value.code == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert named in err[-1], (argv, err)


def test_declines_keep_the_cards_that_would_have_captured_where_the_opponent_did_not() -> None:
    """Two games, the opponent (seat 1) deciding in both: in game 0 a capture was possible and not taken, in game 1
    it was taken; then game 0's opponent draws two cards at a later move."""
    views = grid_belief.Views(OPTIONS)
    declines = grid_belief.Declines(views)
    declines.start(2, seat=0)
    states = np.zeros(2, dtype=[("cap_len", np.int8, (2,)), ("draw_len", np.int8)])
    states["draw_len"] = 30
    obs = np.zeros((2, views.size), np.float32)
    obs[:, views.fits_capture.start + np.array([3, 17])] = 1.0
    rows = np.array([0, 1])
    declines.before(obs, states, rows)
    states["cap_len"][1, 1] = 2  # game 1's opponent captured
    states["draw_len"] = [29, 30]  # game 0's opponent drew one card at the end of its turn
    declines.after(states, rows)
    f = declines.features(rows)
    assert f.shape == (2, grid_belief.Declines.WIDTH)
    assert np.flatnonzero(f[0, :52]).tolist() == [3, 17] and not f[1, :104].any()
    assert f[0, 104:].tolist() == pytest.approx([1 / 5, 1 / 10, 1.0]) and f[1, 104:].tolist() == [0, 0, 0]
    empty = np.zeros((1, views.size), np.float32)  # no capturing cell: nothing declined, draws still counted
    declines.before(empty, states, rows[:1])
    states["draw_len"][0] = 27
    declines.after(states, rows[:1])
    assert declines.features(rows[:1])[0, 104:].tolist() == pytest.approx([3 / 5, 3 / 10, 1.0])


def test_a_belief_with_the_opponents_declines_trains_and_plays(tmp_path: Path) -> None:
    path = str(random_networks("grid", OPTIONS, tmp_path, 1, prior="greedy-scores")[0])
    r = grid_belief.run(path, "greedy", "learned", 2, "kh", 3, 2, belief_deals=6, belief_epochs=1,
                        options=dict(OPTIONS), belief_seed=1, belief_history=True)  # fmt: skip
    assert r["belief"]["rows"] > 50 and r["games"] == 6


def test_the_command_line_names_itself_and_a_bad_draw_pile_range() -> None:
    """Run with ``python -m``, a study's errors name the module (not ``__main__``) and the flag."""
    import subprocess
    import sys

    for bad in ("5", "7:3", "a:b"):
        done = subprocess.run(
            [sys.executable, "-m", "experiments.studies.grid_belief", "x.zip", "ppo", "--draw-pile", bad],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 2
        last = done.stderr.strip().splitlines()[-1]
        assert last.startswith("python -m experiments.studies.grid_belief: error: argument --draw-pile"), last
