"""The compiled searches (``agents.search.compiled``): legal play, no peeking, consistent trees, the Python result.

* ``CompiledISMCTS`` and ``CompiledPUCT`` play only legal moves, through the agents (``ismcts`` and
  ``exit-search`` with ``engine="compiled"``) and on their own;
* they never read a card the searching seat cannot see: two states that differ only in such cards give the
  same search (every statistic of the root) with the same seeds, because a determinization is drawn from
  what the seat saw alone (the games' compiled ``determinize`` builds the unseen cards from what the seat
  knows, then shuffles them);
* node statistics add up: every node's visits sum to its selection count, the root's to the simulations;
* where both are deterministic (nothing hidden: a determinization that returns the state itself, a
  deterministic evaluator, no noise), ``CompiledPUCT`` gives exactly ``agents.search.puct.PUCTSearch``'s visit counts
  and values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
import jericho_env
from agents.search import compiled as cs
from agents.search.compiled import CompiledISMCTS, CompiledPUCT, Tree, compiled_kernels, obs_key, salt
from agents.search.engine import ISMCTS
from agents.search.puct import PUCTSearch
from experiments.play.tournament import play_game
from jericho_env.agent_plugins import choose_action
from jericho_env.core.kernels import NO_PARAMS, njit, row_signatures
from jericho_env.envs.aec import JerichoEnv

try:
    from tests.toy_batched import DTYPE as TOY_DTYPE
    from tests.toy_game import ToyRules, ToyState
except ImportError:  # pragma: no cover
    from toy_batched import DTYPE as TOY_DTYPE  # type: ignore[no-redef]
    from toy_game import ToyRules, ToyState  # type: ignore[no-redef]

GAMES = [("toy", {"pile": 20}), ("castles", {}), ("grid", {"board_size": 9}), ("walls", {"num_players": 3})]


class OpenToyRules(ToyRules):
    """The toy game with nothing hidden from search: a determinization is the state itself."""

    game_id = "open-toy"

    def determinize(self, s: ToyState, seat: int, rng: np.random.Generator) -> ToyState:
        return self.clone(s)


_SIG = row_signatures(TOY_DTYPE, NO_PARAMS)
assert _SIG is not None


@njit(_SIG.determinize, cache=True)
def _same_state(
    src: np.ndarray, src_row: int, params: np.ndarray, seat: int, dst: np.ndarray, dst_row: int, stream: Any, k: int
) -> bool:
    dst[dst_row] = src[src_row]
    return True


def _kernels(rules: Any, open_: bool = False) -> tuple[Any, Any]:
    found = compiled_kernels(rules)
    assert found is not None, "the toy game has row kernels"
    game, kernels = found
    return game, (kernels._replace(determinize=_same_state) if open_ else kernels)


def _evaluator(obs: np.ndarray, masks: np.ndarray, movers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic: a prior leaning with the pile, a value from the own card and the pile."""
    pile = obs[:, 10].astype(np.float64)
    card = obs[:, :10].argmax(axis=1).astype(np.float64)
    priors = np.zeros(masks.shape, dtype=np.float32)
    priors[:, 0] = 0.3 + 0.5 * pile
    priors[:, 1] = 1.0 - priors[:, 0]
    priors[~movers] = 0.0
    values = np.tanh(0.35 * (card - 4.5) + 3.0 * pile - 0.7).astype(np.float32)
    return priors, values


def _any_evaluator(obs: np.ndarray, masks: np.ndarray, movers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic for any game: priors from the action numbers, values from a fixed projection of the rows."""
    weights = np.cos(np.arange(obs.shape[1]) * 0.7)
    x = obs.astype(np.float64) @ weights
    priors = (masks * (1.0 + np.arange(masks.shape[1]) % 3)[None, :] * (1.0 + 0.1 * np.tanh(x))[:, None]).astype(
        np.float32
    )
    return priors, np.tanh(x).astype(np.float32)


def _positions(rules: Any, count: int, seed: int) -> list[Any]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = rules.initial_state(rng)
        for _ in range(int(rng.integers(0, 8))):
            legal = rules.legal_actions(s)
            rules.apply(s, legal[int(rng.integers(len(legal)))])
        if not rules.is_terminal(s) and len(rules.legal_actions(s)) > 1:
            out.append(s)
    return out


def _hidden_twin(rules: Any, state: Any, seat: int, seed: int) -> Any:
    twin = rules.determinize(state, seat, np.random.default_rng(seed))
    assert rules.to_dict(twin) != rules.to_dict(state)
    assert np.array_equal(rules.observe(twin, seat), rules.observe(state, seat))
    return twin


# ---------------------------------------------------------------------------------------------- keys, tree
def _key(obs: np.ndarray, root: int = 0, player: int = 0) -> tuple[int, int]:
    """``obs_key`` from Python (a salt above 2**63 comes back as a Python int: pass it on as uint64)."""
    hi, lo = obs_key(obs, np.uint64(salt(root, player)))
    return int(hi), int(lo)


def test_keys_tell_observations_apart_by_every_bit_and_by_player() -> None:
    rng = np.random.default_rng(0)
    for size in (1, 2, 11, 64, 8731):
        obs = rng.random(size).astype(np.float32)
        base = _key(obs)
        assert _key(obs.copy()) == base
        assert _key(obs, 0, 1) != base and _key(obs, 1, 0) != base
        bits = obs.view(np.uint32)
        keys = {base}
        for i in sorted({0, size // 2, size - 1}):
            for bit in (0, 13, 31):
                flipped = bits.copy()
                flipped[i] ^= np.uint32(1 << bit)
                keys.add(_key(flipped.view(np.float32)))
        assert len(keys) == 1 + 3 * len({0, size // 2, size - 1})
    two = np.zeros(4, dtype=np.float32).view(np.uint32)
    two[1] = two[3] = np.uint32(1 << 31)  # the top bits of two words: a weak hash would cancel them out
    assert _key(two.view(np.float32)) != _key(np.zeros(4, dtype=np.float32))


def test_the_tree_grows_and_keeps_every_node_findable() -> None:
    rules = jericho_env.make_rules("toy", pile=20)
    game, kernels = _kernels(rules)
    search = CompiledISMCTS(rules, game, kernels, simulations=400, rng=np.random.default_rng(1))
    search.tree = Tree(nodes=2, edges=1)  # far too small, below one node's edges: the search must grow it
    state = _positions(rules, 1, seed=3)[0]
    search.search(state, rules.current_player(state))
    assert search.last_simulations == 400 and search.tree.size > 50
    tree = search.tree
    for node in range(tree.size):
        _, found = cs._find(tree.keys, tree.slots, tree.keys[node, 0], tree.keys[node, 1])
        assert found == node


# ---------------------------------------------------------------------------------------------- ISMCTS
@pytest.mark.parametrize(("game", "options"), GAMES)
def test_compiled_ismcts_plays_whole_games_with_legal_moves(game: str, options: dict[str, Any]) -> None:
    env = JerichoEnv(game, **options)
    n = env.rules.info.num_players
    searcher = agents.make("ismcts", game, simulations=40, engine="compiled", **options)
    assert searcher.engine_used == "compiled" and isinstance(searcher.search, CompiledISMCTS)  # type: ignore[attr-defined]
    for deal in range(4):
        seats = [searcher] + [agents.make("random", game, **options) for _ in range(n - 1)]
        seats = seats[deal % n :] + seats[: deal % n]
        returns, steps = play_game(env, seats, env_seed=deal, agent_seeds=list(range(n)))  # refuses illegal moves
        assert env.rules.is_terminal(env.state) and steps > 0 and len(returns) == n


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_compiled_ismcts_choice_is_unchanged_when_hidden_cards_are_swapped(game: str, options: dict[str, Any]) -> None:
    """The true states themselves (not views) differing in hidden cards: the same root statistics, same seeds.

    The search is the ``ismcts`` agent's at the game's default settings (grid and walls: greedy's prior and
    rollouts, compiled), so every compiled piece that reads a state or an observation takes part.
    """
    rules = jericho_env.make_rules(game, **options)
    differ = 0
    for k, state in enumerate(_positions(rules, 3, seed=7)):
        seat = rules.current_player(state)
        twin = _hidden_twin(rules, state, seat, seed=50 + k)
        stats = []
        for s in (state, twin):
            search = agents.make("ismcts", game, simulations=60, seed=k, engine="compiled", **options).search  # type: ignore[attr-defined]
            choice = search.search(s, seat)
            stats.append((choice, *[a.tolist() for a in search.tree.children(0)[:3]]))
        assert stats[0] == stats[1]
        other = agents.make("ismcts", game, simulations=60, seed=k + 100, engine="compiled", **options).search  # type: ignore[attr-defined]
        other.search(state, seat)
        differ += other.tree.children(0)[2].tolist() != stats[0][3]
    assert differ  # another seed searches otherwise: the equality above is not a constant


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_compiled_ismcts_through_the_agent_never_peeks(game: str, options: dict[str, Any]) -> None:
    """As tests/test_search.py: two envs that differ only in what the mover cannot see, the same choice."""
    for seed in range(3):
        env = JerichoEnv(game, **options)
        env.reset(seed=20 + seed)
        rules = env.rules
        for _ in range(2 + seed):
            env.step(rules.legal_actions(env.state)[0])
        seat = rules.current_player(env.state)
        twin = JerichoEnv(game, **options)
        twin.reset(seed=20 + seed)
        twin.state = _hidden_twin(rules, env.state, seat, seed=99 + seed)
        twin.agent_selection, twin._mask = env.agent_selection, None
        choices = []
        for e in (env, twin):
            e._view_rng = np.random.default_rng(7)
            agent = agents.make("ismcts", game, simulations=25, seed=3, engine="compiled", **options)
            choices.append(choose_action(agent, e, e.possible_agents[seat]))
        assert choices[0] == choices[1]


def test_compiled_ismcts_node_statistics_add_up() -> None:
    rules = jericho_env.make_rules("toy", pile=20)
    game, kernels = _kernels(rules)
    for k, state in enumerate(_positions(rules, 3, seed=11)):
        search = CompiledISMCTS(rules, game, kernels, simulations=250, rng=np.random.default_rng(k))
        search.search(state, rules.current_player(state))
        tree = search.tree
        assert search.last_simulations == 250 and tree.totals()[0] == 250
        assert np.array_equal(tree.visit_sums(), tree.totals())
        assert tree.size <= 251  # at most one new node a simulation, plus the root
        actions, visits, wins, _ = tree.children(0)
        assert sorted(actions.tolist()) == rules.legal_actions(state) and visits.sum() == 250
        assert np.all(np.abs(wins) <= visits)  # returns are in [-1, 1]


def test_compiled_ismcts_plays_as_well_as_python_on_the_toy_game() -> None:
    """Both searches at 200 simulations take the last token whenever they can (the toy's one sure point)."""
    rules = jericho_env.make_rules("toy", pile=20)
    game, kernels = _kernels(rules)
    state = rules.initial_state(np.random.default_rng(0))
    state.pile = 2  # taking both tokens scores the last-token point; taking one gives it away
    seat = rules.current_player(state)
    compiled = CompiledISMCTS(rules, game, kernels, simulations=200, rng=np.random.default_rng(0))
    python = ISMCTS(rules, 200, rng=np.random.default_rng(0))
    assert compiled.search(state, seat) == python.search(state, seat) == 1


def test_a_time_budget_alone_ends_the_compiled_search() -> None:
    rules = jericho_env.make_rules("toy", pile=20)
    game, kernels = _kernels(rules)
    search = CompiledISMCTS(rules, game, kernels, simulations=None, time_limit=0.02)
    state = _positions(rules, 1, seed=2)[0]
    search.search(state, rules.current_player(state))
    assert search.last_simulations >= 8


def test_engines_are_chosen_and_refused_with_reasons(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(agents.make("ismcts", "toy", engine="python").search, ISMCTS)  # type: ignore[attr-defined]
    assert isinstance(agents.make("ismcts", "toy").search, CompiledISMCTS)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="engine='fast' is not allowed; use one of auto, python, compiled"):
        agents.make("ismcts", "toy", engine="fast")
    from agents.registry import parse_spec

    assert parse_spec("ismcts=100,engine=python")[2] == {"simulations": 100, "engine": "python"}
    monkeypatch.setattr(cs, "compiled_kernels", lambda rules: None)
    with pytest.raises(ValueError, match="engine='compiled' is not available for 'toy': the game has no compiled"):
        agents.make("ismcts", "toy", engine="compiled")
    assert isinstance(agents.make("ismcts", "toy").search, ISMCTS)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="engine='compiled' is not available"):
        cs.make_puct(jericho_env.make_rules("toy"), _evaluator, 10, engine="compiled")


@pytest.mark.slow
def test_a_pickled_compiled_search_plays_in_another_process(tmp_path: Any) -> None:
    """The search holds machine-code addresses of this process: unpickled elsewhere it looks them up again."""
    import pickle
    import subprocess
    import sys

    rules = jericho_env.make_rules("toy", pile=20)
    state = _positions(rules, 1, seed=5)[0]
    agent = agents.make("ismcts", "toy", simulations=50, seed=2, engine="compiled", pile=20)
    puct = CompiledPUCT(rules, *_kernels(rules), _evaluator, 30, rng=np.random.default_rng(0))
    path = tmp_path / "search.pkl"
    path.write_bytes(pickle.dumps((agent.search, puct, state)))  # type: ignore[attr-defined]
    code = (
        "import pickle, sys, tests.conftest\n"
        f"search, puct, state = pickle.loads(open({str(path)!r}, 'rb').read())\n"
        "seat = state.to_move\n"
        "print(search.search(state, seat), puct.search([state], [seat])[0].visits.sum())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    choice, visits = done.stdout.split()
    assert int(choice) in rules.legal_actions(state) and int(visits) == 30


# ---------------------------------------------------------------------------------------------- PUCT
@pytest.mark.parametrize("value_rows", ["mover", "all"])
def test_compiled_puct_equals_python_puct_where_both_are_deterministic(value_rows: str) -> None:
    rules = OpenToyRules(pile=20)
    game, kernels = _kernels(rules, open_=True)
    views = _positions(rules, 5, seed=4)
    seats = [rules.current_player(v) for v in views]
    python = PUCTSearch(rules, _evaluator, 300, 1.5, value_rows, np.random.default_rng(0), found=(game, kernels))
    compiled = CompiledPUCT(rules, game, kernels, _evaluator, 300, 1.5, value_rows, np.random.default_rng(1))
    want, got = python.search(views, seats), compiled.search(views, seats)
    for w, g in zip(want, got, strict=True):
        assert g.legal == w.legal
        assert g.visits.tolist() == w.visits.tolist()
        assert np.allclose(g.q, w.q, rtol=0, atol=1e-12) and abs(g.value - w.value) < 1e-12
        assert np.allclose(g.prior, w.prior, rtol=0, atol=1e-15)
    assert compiled.evaluations == python.evaluations
    # the searches are not trivial: the visits differ from root to root and from a flat split
    assert len({tuple(g.visits.tolist()) for g in got}) > 1 and any(abs(g.visits[0] - 150) > 20 for g in got)


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_compiled_puct_never_peeks_and_its_statistics_add_up(game: str, options: dict[str, Any]) -> None:
    rules = jericho_env.make_rules(game, **options)
    game_, kernels = _kernels(rules)
    views = _positions(rules, 3, seed=8)
    seats = [rules.current_player(v) for v in views]
    twins = [_hidden_twin(rules, v, s, seed=60 + k) for k, (v, s) in enumerate(zip(views, seats, strict=True))]
    rows = "mover" if rules.info.num_players == 2 else "all"
    results = []
    for positions in (views, twins):
        search = CompiledPUCT(
            rules, game_, kernels, _any_evaluator, 100, 1.5, rows, np.random.default_rng(5), 0.5, 0.25
        )
        results.append(search.search(positions, seats))
        tree = search.tree
        assert np.array_equal(tree.visit_sums(), tree.totals())
        assert tree.totals()[search.root_nodes].tolist() == [100] * len(views)
    for a, b, view in zip(*results, views, strict=True):
        assert a.visits.tolist() == b.visits.tolist() and np.array_equal(a.q, b.q) and np.array_equal(a.prior, b.prior)
        assert a.visits.sum() == 100 and sorted(a.legal) == rules.legal_actions(view)


def test_compiled_puct_leaves_a_root_with_one_legal_action_unsearched() -> None:
    rules = jericho_env.make_rules("toy", pile=20)
    game, kernels = _kernels(rules)
    views = _positions(rules, 1, seed=8)
    seats = [rules.current_player(views[0])]
    single = rules.initial_state(np.random.default_rng(0))
    single.pile = 1
    res = CompiledPUCT(rules, game, kernels, _evaluator, 20).search([single, views[0]], [single.to_move, seats[0]])
    assert res[0].legal == [0] and res[0].visits.sum() == 0 and res[1].visits.sum() == 20


def test_exit_search_takes_the_compiled_search_and_plays_legal_moves(tmp_path: Any) -> None:
    """``exit-search`` with an (untrained) expert-iteration network: compiled by default, Python on request."""
    import torch

    from agents.checkpoint import save_checkpoint
    from agents.search.puct import PUCTSearch
    from experiments.exit import _Model, first_network, make_exit_config, network_meta

    torch.manual_seed(0)
    cfg = make_exit_config("castles", start="scratch")
    policy, spec = first_network(cfg, "")
    path = tmp_path / "net.zip"
    save_checkpoint(_Model(policy, 0, 0), path, network_meta(cfg, spec, 0))
    agent = agents.make("exit-search", "castles", path=str(path), simulations=30)
    assert isinstance(agent.search, CompiledPUCT)  # type: ignore[attr-defined]
    python = agents.make("exit-search", "castles", path=str(path), simulations=30, engine="python")
    assert isinstance(python.search, PUCTSearch)  # type: ignore[attr-defined]
    env = JerichoEnv("castles")
    for deal in range(2):
        seats = [agent, agents.make("random", "castles")][:: 1 if deal == 0 else -1]
        returns, steps = play_game(env, seats, env_seed=deal, agent_seeds=[0, 1])  # refuses illegal moves
        assert steps > 0 and len(returns) == 2


def test_compiled_puct_makes_room_for_the_last_rounds_leaves() -> None:
    """The leaves of the last round are expanded after the loop: the tree must grow for them too.

    A tree that starts exactly full after the roots forces every later round to need room; without it the
    last expansion writes past the arrays (an out-of-bounds write that Numba does not check), which a count
    above the arrays' length shows.
    """
    rules = jericho_env.make_rules("castles")
    game, kernels = _kernels(rules)
    views = _positions(rules, 6, seed=3)
    seats = [rules.current_player(v) for v in views]
    a = rules.info.num_actions
    for simulations in (1, 2, 3, 5):
        search = CompiledPUCT(rules, game, kernels, _any_evaluator, simulations, 1.5, "mover", np.random.default_rng(2))
        search.tree = Tree(nodes=len(views), edges=len(views) * a)
        results = search.search(views, seats)
        nodes, edges = (int(c) for c in search.tree.count)
        assert nodes <= len(search.tree.nodes) and edges <= len(search.tree.edges), (simulations, nodes, edges)
        assert all(int(r.visits.sum()) == simulations for r in results if len(r.legal) > 1)
