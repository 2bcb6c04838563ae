"""Agents: the registry, masks respected, and greedy beating random in every game."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import jericho_env
from experiments.play.tournament import AgentSpec, run_games, tabulate
from tests.helpers import play_out


def test_unknown_agent_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown agent 'nosuch'.*random, greedy"):
        agents.make("nosuch", "grid")


def test_unknown_game_for_an_agent() -> None:
    with pytest.raises(ValueError, match="unknown game id"):
        agents.make("random", "chess")


def test_greedy_capture_is_the_grid_greedy() -> None:
    assert type(agents.make("greedy-capture", "grid")) is type(agents.make("greedy", "grid"))
    with pytest.raises(ValueError, match="greedy-capture plays only the grid game"):
        agents.make("greedy-capture", "walls")


def test_agents_follow_the_protocol() -> None:
    for game in jericho_env.GAME_IDS:
        for name in ("random", "greedy"):
            assert isinstance(agents.make(name, game), agents.Agent)


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
@pytest.mark.parametrize("name", ["random", "greedy"])
def test_agents_never_pick_a_masked_action(game: str, name: str) -> None:
    env = jericho_env.make(game)
    players = [agents.make(name, game, seed=i) for i in range(len(env.possible_agents))]

    def choose(agent_id: str, obs: dict[str, np.ndarray]) -> int:
        a = players[env.unwrapped.seat_of(agent_id)].act(obs)
        assert isinstance(a, int) and obs["action_mask"][a] == 1
        return a

    checked = 0
    for episode in range(25):
        env.reset(seed=episode)
        checked += play_out(env, choose)
    assert checked > 100


def test_random_agent_is_reproducible_from_its_seed() -> None:
    obs = {"observation": np.zeros(3, np.float32), "action_mask": np.array([1, 0, 1, 1, 0, 1], np.int8)}
    a, b = agents.make("random", "grid", seed=4), agents.make("random", "grid", seed=4)
    seq_a = [a.act(obs) for _ in range(30)]
    assert seq_a == [b.act(obs) for _ in range(30)]
    a.reset(seed=4)
    assert [a.act(obs) for _ in range(30)] == seq_a
    assert set(seq_a) == {0, 2, 3, 5}


@pytest.mark.parametrize("game", jericho_env.GAME_IDS)
def test_greedy_beats_random_significantly(game: str) -> None:
    specs = [AgentSpec("greedy", "greedy"), AgentSpec("random", "random")]
    n = jericho_env.make_rules(game).info.num_players
    records = run_games(game, specs, deals=60 if n == 2 else 30, seed=123)
    cells = tabulate(records, ["greedy", "random"])
    lo, _ = cells[("greedy", "random")].interval
    # two players: above an even score; n players: above the 1/n share an equal agent would get
    assert lo > (0.5 if n == 2 else 1.0 / n), cells[("greedy", "random")]


@pytest.mark.parametrize("name", ["random", "greedy"])
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"bogus_kw": 1}, "got unknown argument(s) bogus_kw; it takes seed and the game's options (ranks, small_deck"),
        ({"ranks": 7}, "ranks must be one of 5, 10, 13"),
    ],
)
def test_unknown_or_bad_keyword_arguments_are_refused(name: str, kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as err:
        agents.make(name, "castles", **kwargs)
    assert message in str(err.value)


@pytest.mark.parametrize(("game", "made", "played"), [("walls", 3, 4), ("grid", 7, 21), ("castles", 5, 10)])
def test_greedy_given_another_options_observation_names_the_mismatch(game: str, made: int, played: int) -> None:
    """The issue: a 3-player walls greedy given a 4-player observation died in a numpy broadcast."""
    key = {"walls": "num_players", "grid": "board_size", "castles": "ranks"}[game]
    greedy = agents.make("greedy", game, **{key: made})
    env = jericho_env.make(game, **{key: played})
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match=rf"greedy agent made for '{game}' with options .* expects observations"):
        greedy.act(obs)


def test_grid_greedy_scores_a_quiet_placement_as_danger_and_setup_on_the_table_after_it() -> None:
    """The scoring's shared per-cell work for a quiet placement gives the plain formula: the danger and set-up of
    the changed cells on the table with the card placed, against the danger there before (less the tie-breaks)."""
    from agents.greedy.grid import GreedyAgent, risk_table
    from jericho_env.games.grid.state import POINTS
    from jericho_env.registry import make_rules
    from tests.greedy_oracles import GridGreedy

    rules = make_rules("grid")
    greedy = GreedyAgent("grid", seed=0)
    plain = GridGreedy(greedy)
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(12):
        state = rules.initial_state(rng)
        while not rules.is_terminal(state):
            obs = rules.observe(state, rules.current_player(state))
            hand, table, unseen, opp, in_chain = plain.read(obs)
            risk = risk_table(unseen.bit_count(), opp)
            base = plain.danger(table, plain.frontier(table), unseen, risk)
            legal = np.flatnonzero(rules.legal_mask(state))
            scored = dict(greedy.action_values({"observation": obs, "action_mask": rules.legal_mask(state)}, legal))
            for a in legal:
                move = greedy.actions.decode(int(a))
                if move.kind == "stop" or in_chain or plain.captured_by(table, move.cell):
                    continue
                card, cell = hand[move.slot], move.cell
                mine = sum(1 << c for c in hand if c != card)
                changed = {q for q in plain.nb[cell] if q not in table}
                for q in plain.nb[cell]:
                    if q in table:
                        changed.update(r for r in plain.nb[q] if r not in table)
                changed.discard(cell)
                before = plain.danger(table, changed, unseen, risk)
                after_table = {**table, cell: card}
                after = plain.danger(after_table, changed, unseen, risk)
                setup = plain.setup(after_table, changed, mine, unseen, risk)
                expected = -greedy.risk_weight * (base + after - before) + greedy.setup_weight * setup
                tie_breaks = greedy.card_weight * POINTS[card] + greedy.distance_weight * plain.board.distance[cell]
                got = scored[int(a)] + tie_breaks
                assert got == pytest.approx(expected, abs=1e-9)
                checked += 1
            rules.apply(state, int(rng.choice(legal)))
    assert checked > 500
