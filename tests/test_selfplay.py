"""The batched self-play env: same games as the single-agent view, batched opponents, SB3 VecEnv, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import jericho_env
from jericho_env import IllegalActionError, OptionError
from jericho_env.envs.selfplay import RandomBatchPolicy, SelfPlayVector

CASES = [
    ("castles", {}),
    ("castles", {"small_deck": True, "reversed_order": True}),
    ("walls", {}),
    ("walls", {"num_players": 3}),
    ("walls", {"num_players": 5}),
    ("grid", {"board_size": 11}),
    ("toy", {}),
]


def first_legal(observations: Any, masks: np.ndarray) -> np.ndarray:
    return np.argmax(masks, axis=1)


def last_legal(observations: Any, masks: np.ndarray) -> np.ndarray:
    return masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)


def by_observation(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """A deterministic policy that reads the observation: the legal action nearest a hash of it."""
    out = np.empty(len(masks), dtype=np.int64)
    for j in range(len(masks)):
        legal = np.flatnonzero(masks[j])
        out[j] = legal[int(observations[j].sum() * 1000) % len(legal)]
    return out


def single(policy: Any) -> Any:
    """A batch policy as a one-observation callable for the single-agent view."""
    return lambda obs: int(policy(obs["observation"][None], obs["action_mask"][None].astype(bool))[0])


@pytest.mark.parametrize(("game", "options"), CASES)
def test_same_games_as_the_single_agent_view(game: str, options: dict[str, Any]) -> None:
    """Same seeds, same deterministic opponents: the same seats, deals, observations, masks and rewards."""
    n, seed = 3, 100
    pool = [first_legal, last_legal, by_observation]
    vector = SelfPlayVector(game, n, opponents=pool, seed=seed, **options)
    obs, masks = vector.reset()
    views = [jericho_env.single_agent(game, opponents=[single(p) for p in pool], **options) for _ in range(n)]
    for i, view in enumerate(views):
        first, info = view.reset(seed=seed + i)
        assert np.array_equal(first, obs[i]) and info["seat"] == vector.seats[i]
    chooser = np.random.default_rng(0)
    episodes = 0
    for _ in range(400):
        actions = np.array([chooser.choice(np.flatnonzero(masks[i])) for i in range(n)])
        obs, rewards, dones, infos = vector.step(actions)
        masks = vector.action_masks()
        for i, view in enumerate(views):
            o, r, terminated, truncated, info = view.step(int(actions[i]))
            assert (r, terminated, truncated) == (rewards[i], dones[i], False)
            if terminated:
                episodes += 1
                assert np.array_equal(o, infos[i]["terminal_observation"]) and info["seat"] == infos[i]["seat"]
                assert infos[i]["episode"]["r"] == r
                o, info = view.reset()
                assert info["seat"] == vector.seats[i]
            assert np.array_equal(o, obs[i])
            assert np.array_equal(view.action_masks(), masks[i])
    assert episodes >= 10


class Counting:
    """A batch policy that records the size of every batch it is asked."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        assert observations.shape[0] == masks.shape[0]
        self.sizes.append(len(masks))
        return first_legal(observations, masks)


def test_each_opponent_is_asked_once_per_round_for_all_its_games() -> None:
    counting = Counting()
    vector = SelfPlayVector("walls", 32, opponents=[counting], seed=1)
    _, masks = vector.reset()
    for _ in range(20):
        before = len(counting.sizes)
        vector.step(first_legal(None, masks))
        masks = vector.action_masks()
        # three opponent seats in 4-player walls, and a scoring's donations: a few rounds, one call per round
        assert len(counting.sizes) - before <= 8
    assert vector.opponent_decisions == sum(counting.sizes) and vector.opponent_calls == len(counting.sizes)
    assert np.mean(counting.sizes) >= 8  # batches, not one game at a time


def test_random_opponents_read_no_observation_and_play_legal_moves() -> None:
    policy = RandomBatchPolicy(seed=3)
    masks = np.zeros((4000, 6), dtype=bool)
    masks[:, [1, 4, 5]] = True
    actions = policy(None, masks)
    assert set(actions.tolist()) == {1, 4, 5}
    counts = np.bincount(actions, minlength=6)[[1, 4, 5]]
    assert counts.min() > 1200  # uniform: about 1333 each
    assert RandomBatchPolicy.uses_observation is False


def test_an_illegal_learner_action_is_refused_and_nothing_changes() -> None:
    vector = SelfPlayVector("castles", 4, seed=5)
    _, masks = vector.reset()
    before = [vector.rules.to_dict(s) for s in vector.states]
    bad = first_legal(None, masks)
    illegal = int(np.flatnonzero(~masks[2])[0])
    bad[2] = illegal
    with pytest.raises(IllegalActionError, match="game 2"):
        vector.step(bad)
    with pytest.raises(IllegalActionError, match="outside the action space"):
        vector.step(np.full(4, vector.num_actions))
    with pytest.raises(ValueError, match="4 actions"):
        vector.step(np.zeros(3, dtype=np.int64))
    assert [vector.rules.to_dict(s) for s in vector.states] == before
    assert np.array_equal(vector.action_masks(), masks)


def test_an_opponent_that_plays_illegally_is_named() -> None:
    def cheat(observations: Any, masks: np.ndarray) -> np.ndarray:
        return np.argmin(masks, axis=1)  # an illegal action wherever one exists

    cheat.name = "cheat"  # type: ignore[attr-defined]
    vector = SelfPlayVector("walls", 2, opponents=[cheat], seed=0)
    with pytest.raises(IllegalActionError, match="cheat"):
        vector.reset()


def test_bad_construction_arguments_say_what_is_allowed() -> None:
    with pytest.raises(OptionError, match="num_envs"):
        SelfPlayVector("castles", 0)
    with pytest.raises(OptionError, match="seat"):
        SelfPlayVector("castles", 2, seat=2)
    with pytest.raises(OptionError, match="batch policy"):
        SelfPlayVector("castles", 2, opponents=[3])
    with pytest.raises(OptionError, match="unknown game"):
        SelfPlayVector("chess", 2)
    with pytest.raises(RuntimeError, match="reset"):
        SelfPlayVector("castles", 2).step(np.zeros(2, dtype=np.int64))


def test_added_opponents_join_new_games_and_the_oldest_added_is_dropped() -> None:
    vector = SelfPlayVector("castles", 8, opponents=[first_legal], seed=2)
    vector.reset()
    vector.add_opponent(last_legal, max_added=1)
    vector.add_opponent(by_observation, max_added=1)
    assert vector.pool == [first_legal, by_observation]
    seen: set[Any] = set()
    _, masks = vector.reset()
    for _ in range(300):
        _, _, _, _ = vector.step(first_legal(None, masks))
        masks = vector.action_masks()
        seen.update(p for row in vector.opponents for p in row if p is not None)
    assert seen == {first_legal, by_observation}


def test_fixed_seat_replays_the_same_deals_in_every_seat() -> None:
    """With a fixed seat the deals depend on the seed only: what tournaments need for seat-swapped deals."""
    deals = []
    for seat in (0, 1):
        vector = SelfPlayVector("castles", 5, opponents=[first_legal], seat=seat, seed=9)
        vector.reset()
        assert (vector.seats == seat).all()
        deals.append(vector.deal_seeds.tolist())
        # the deal seed rebuilds the deal: the same state the env dealt
        rules = vector.rules
        dealt = rules.initial_state(np.random.default_rng(int(vector.deal_seeds[0])))
        assert rules.card_zones(dealt).keys() == rules.card_zones(vector.states[0]).keys()
    assert deals[0] == deals[1] and len(set(deals[0])) == 5


def test_sb3_vec_env_trains_maskable_ppo_and_reports_episodes() -> None:
    from sb3_contrib import MaskablePPO

    from jericho_env.envs.sb3 import SelfPlayVecEnv

    venv = SelfPlayVecEnv("castles", 16, opponents=["random"], seed=0)
    masks = np.stack(venv.env_method("action_masks"))
    assert masks.shape == (16, venv.action_space.n) and venv.has_attr("action_masks")
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=256, n_epochs=1, seed=0, device="cpu")
    model.learn(2048)
    assert model.num_timesteps >= 2048 and len(model.ep_info_buffer) > 0
    obs = venv.reset()
    finished = 0
    for _ in range(200):
        actions = np.array([np.flatnonzero(m)[0] for m in venv.action_masks()])
        obs, rewards, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            finished += 1
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert rewards[i] == infos[i]["episode"]["r"] in (-1.0, 1.0)
    assert finished > 0


def test_sb3_vec_env_appends_the_hint_and_zeros_it_after_a_game() -> None:
    from jericho_env.envs.sb3 import SelfPlayVecEnv

    def hint(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks[:, :2].astype(np.float32) + 0.25

    venv = SelfPlayVecEnv("castles", 4, seed=1, hint=hint, hint_size=2)
    size = venv.vector.observation_size
    obs = venv.reset()
    assert obs.shape == (4, size + 2) and np.all(obs[:, size:] >= 0.25)
    for _ in range(100):
        actions = np.array([np.flatnonzero(m)[0] for m in venv.action_masks()])
        obs, _, dones, infos = venv.step(actions)
        for i in np.flatnonzero(dones):
            assert np.array_equal(infos[i]["terminal_observation"][size:], np.zeros(2))
    with pytest.raises(ValueError, match="hint"):
        SelfPlayVecEnv("castles", 4, hint=hint)


def test_shaping_moves_credit_earlier_without_changing_any_episode_return() -> None:
    """Potential-based shaping (grid: the points lead): every episode's shaped rewards sum to its outcome."""
    vector = SelfPlayVector("grid", 8, seed=3, shaping=2.0, board_size=11)
    _, masks = vector.reset()
    policy = RandomBatchPolicy(seed=1)
    total = np.zeros(8)
    finished = shaped_steps = 0
    for _ in range(1500):
        _, rewards, dones, infos = vector.step(policy(None, masks))
        masks = vector.action_masks()
        shaped_steps += int(np.count_nonzero(rewards[~dones]))
        total += rewards
        for i in np.flatnonzero(dones):
            assert total[i] == pytest.approx(infos[i]["episode"]["r"], abs=1e-5)
            total[i] = 0.0
            finished += 1
    assert finished > 50 and shaped_steps > 100  # captures pay during the game, and it all adds up at the end
    unshaped = SelfPlayVector("castles", 2, seed=0)
    unshaped.reset()
    assert unshaped.rules.potential(unshaped.states[0], 0) == 0.0  # games without a potential: no shaping
    with pytest.raises(OptionError, match="shaping"):
        SelfPlayVector("grid", 2, shaping=-1.0)


@pytest.mark.parametrize("game", ["castles", "grid", "walls"])
def test_searching_opponents_get_their_seats_information_view_per_row(game: str) -> None:
    """A search agent as a batch opponent is handed, per row, a redealt state its seat cannot tell apart."""
    from agents.batch import AgentBatchPolicy

    class Spy:
        name = "spy"

        def __init__(self) -> None:
            self.view: Any = None
            self.checked = 0

        def observe_view(self, view: Any) -> None:
            self.view = view

        def act(self, observation: dict[str, np.ndarray]) -> int:
            rules = vector.rules
            seat = rules.current_player(self.view)
            assert np.array_equal(rules.observe(self.view, seat), observation["observation"])
            assert np.array_equal(rules.legal_mask(self.view).astype(np.int8), observation["action_mask"])
            self.checked += 1
            self.view = None  # one view per act
            return int(np.flatnonzero(observation["action_mask"])[0])

    spy = Spy()
    policy = AgentBatchPolicy(spy)
    assert policy.uses_views
    vector = SelfPlayVector(game, 4, opponents=[policy], seed=3)
    _, masks = vector.reset()
    for _ in range(12):
        vector.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        masks = vector.action_masks()
    assert spy.checked == vector.opponent_decisions > 0
    with pytest.raises(ValueError, match="information view"):  # called without views: named, not guessed
        policy(np.zeros((1, vector.observation_size), np.float32), masks[:1])


def test_ismcts_plays_as_a_batched_opponent() -> None:
    from agents.batch import make_batch_policy

    vector = SelfPlayVector(
        "castles", 3, opponents=[make_batch_policy("ismcts", "castles", seed=0, simulations=8)], seed=1
    )
    _, masks = vector.reset()
    for _ in range(20):
        _, _, _, _ = vector.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        masks = vector.action_masks()
    assert vector.opponent_decisions > 0
