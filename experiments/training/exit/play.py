"""Expert iteration's games: self-play by search with the current network, as training rows.

A worker plays a task's games (a list of deal seeds) in lockstep, every seat searching; every random draw comes
from the task's seeds, so a payload and a task list give the same rows on any backend and any number of workers.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.search.rollout_search import improved_logits
from experiments.play.backends import Backend, map_chunks


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """How the self-play search runs (``experiments.training.presets.EXIT``)."""

    simulations: int
    c_puct: float
    dirichlet_alpha: float
    dirichlet_fraction: float
    temperature_moves: int
    value_rows: str
    engine: str = "auto"  # agents.search.compiled.make_puct: compiled where the game has row kernels, else Python
    expert: str = "puct"  # who plays and gives the targets, the network in search: "puct" or "rollouts"
    expert_simulations: int | None = None  # "rollouts": games per action (None: its default)
    expert_temperature: float = 0.1  # "rollouts": the returns' scale against the prior's log-probabilities
    target: str = "policy"  # the expert's distribution, or "advantage" (rollouts): the improved policy's logits


# the per-row arrays of ``Rows`` and their dtypes
ROW_ARRAYS: dict[str, Any] = {"features": np.float32, "masks": bool, "targets": np.float32, "values": np.float32,
                              "policy": bool}  # fmt: skip


@dataclasses.dataclass
class Rows:
    """Training rows: network inputs, legal masks, visit distributions (policy rows), value targets."""

    features: np.ndarray  # (n, input size) float32
    masks: np.ndarray  # (n, num_actions) bool
    targets: np.ndarray  # (n, num_actions) float32; zeros on value-only rows
    values: np.ndarray  # (n,) float32: the seat's final return
    policy: np.ndarray  # (n,) bool: whether the row has a policy target (the mover's row)
    games: int = 0
    moves: int = 0

    def sliced(self, start: int) -> Rows:
        """The rows from ``start`` on (the counters kept)."""
        return dataclasses.replace(self, **{name: getattr(self, name)[start:] for name in ROW_ARRAYS})

    @staticmethod
    def concat(parts: Sequence[Rows]) -> Rows:
        """The rows of ``parts`` one after the other."""
        arrays = {name: np.concatenate([getattr(p, name) for p in parts]) for name in ROW_ARRAYS}
        return Rows(**arrays, games=sum(p.games for p in parts), moves=sum(p.moves for p in parts))

    def __len__(self) -> int:
        return len(self.values)


def network_payload(checkpoint: str | Path) -> dict[str, Any]:
    """A network as plain data for workers: the bytes of its checkpoint (the safe format of ``agents.checkpoint``)."""
    return {"checkpoint": Path(checkpoint).read_bytes()}


def network_from_payload(data: dict[str, Any], game_id: str, options: dict[str, Any]) -> Any:
    """The policy network of ``network_payload``'s data, loaded like any checkpoint (checked, never unpickled)."""
    from agents.checkpoint import load_policy

    with tempfile.TemporaryDirectory(prefix="jericho-exit-") as tmp:
        path = Path(tmp) / "network.zip"
        path.write_bytes(data["checkpoint"])
        policy, _ = load_policy(path, game_id=game_id, options=options)
    policy.set_training_mode(False)
    return policy


def advantage_target(res: Any, num_actions: int, temperature: float) -> np.ndarray:
    """A rollout result's improved logits ``log prior + Q / temperature``, centred over its legal actions."""
    z = improved_logits(res.prior, res.q, temperature)
    out = np.zeros(num_actions, dtype=np.float32)
    out[res.legal] = z - z.mean()
    return out


class _Worker:
    """What a worker builds once per iteration: the rules, the network, its prior's floats and the search."""

    def __init__(self, payload: dict[str, Any]) -> None:
        import torch

        from agents.exit import NetworkEvaluator, network_prior
        from jericho_env.registry import make_rules

        torch.set_num_threads(1)
        self.game_id, self.options = payload["game_id"], payload["options"]
        self.rules = make_rules(self.game_id, **self.options)
        self.settings = SearchSettings(**payload["search"])
        self.policy = network_from_payload(payload["network"], self.game_id, self.options)
        self.evaluator = NetworkEvaluator(self.policy, network_prior(self.policy, self.game_id, self.options))

    def play(self, seeds: Sequence[int]) -> Rows:
        """The games of ``seeds`` played in lockstep; their rows in game order, then move order: each decision's
        network input, legal mask and expert target (``value_rows="all"``: also the other seats' value-only rows)."""
        from agents.search.compiled import make_puct

        rules, st = self.rules, self.settings
        n_players, num_actions = rules.info.num_players, rules.info.num_actions
        rng = np.random.default_rng(np.random.SeedSequence([int(s) for s in seeds]))
        states = [rules.initial_state(np.random.default_rng(int(s))) for s in seeds]
        search: Any
        if st.expert == "rollouts":
            from agents.search.rollout_search import DEFAULT_ROLLOUTS, PolicyRolloutSearch

            count = st.expert_simulations if st.expert_simulations is not None else DEFAULT_ROLLOUTS
            search = PolicyRolloutSearch(rules, self.evaluator, count, st.expert_temperature, rng)
        else:
            search = make_puct(
                rules, self.evaluator, st.simulations, st.c_puct, st.value_rows, rng, st.dirichlet_alpha,
                st.dirichlet_fraction, engine=st.engine,
            )  # fmt: skip
        per_game: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]]] = [[] for _ in seeds]
        decisions = np.zeros((len(seeds), n_players), dtype=np.int64)
        live = [k for k, s in enumerate(states) if not rules.is_terminal(s)]
        moves = 0
        while live:
            movers = [rules.current_player(states[k]) for k in live]
            results = search.search([states[k] for k in live], movers)
            obs = np.stack([rules.observe(states[k], p) for k, p in zip(live, movers, strict=True)])
            masks = np.stack([rules.legal_mask(states[k]).astype(bool) for k in live])
            features = self.evaluator.features(obs, masks)
            for j, (k, p, res) in enumerate(zip(live, movers, results, strict=True)):
                target = res.policy(num_actions)
                learned = target
                if st.target == "advantage":  # learned by squared error: the rollouts' noise in Q averages out
                    learned = advantage_target(res, num_actions, st.expert_temperature)
                per_game[k].append((features[j], masks[j], learned, p, True))
                if st.value_rows == "all":
                    others = [q for q in range(n_players) if q != p]
                    o_obs = np.stack([rules.observe(states[k], q) for q in others])
                    o_masks = np.zeros((len(others), num_actions), dtype=bool)
                    o_feat = self.evaluator.features(o_obs, o_masks)
                    zeros = np.zeros(num_actions, dtype=np.float32)
                    per_game[k].extend((o_feat[i], o_masks[i], zeros, q, False) for i, q in enumerate(others))
                if decisions[k, p] < st.temperature_moves and res.visits.sum() > 0:
                    action = int(rng.choice(num_actions, p=target / target.sum()))
                else:
                    action = res.best()
                decisions[k, p] += 1
                rules.apply(states[k], action)  # checked: a search bug never plays an illegal move unseen
                moves += 1
            live = [k for k in live if not rules.is_terminal(states[k])]
        return self._rows(per_game, states, moves)

    def _rows(self, per_game: list[list[Any]], states: list[Any], moves: int) -> Rows:
        """The games' rows, each valued by its seat's final return."""
        info = self.rules.info
        returns = [self.rules.returns(s) for s in states]
        rows = [(*r[:3], returns[k][r[3]], r[4]) for k, g in enumerate(per_game) for r in g]
        if not rows:  # no decision: empty arrays of the rows' widths
            blank = (np.zeros((1, info.observation_size), np.float32), np.zeros((1, info.num_actions), bool))
            width, actions = self.evaluator.features(*blank).shape[1], info.num_actions
            shapes = {"features": (0, width), "masks": (0, actions), "targets": (0, actions), "values": 0, "policy": 0}
            return Rows(**{k: np.zeros(shapes[k], dtype) for k, dtype in ROW_ARRAYS.items()}, games=len(states))
        features, masks, targets, values, policy = zip(*rows, strict=True)
        return Rows(
            np.stack(features).astype(np.float32, copy=False), np.stack(masks), np.stack(targets),
            np.array(values, dtype=np.float32), np.array(policy, dtype=bool), len(states), moves,
        )  # fmt: skip


_worker: _Worker | None = None


def _init(payload: dict[str, Any]) -> _Worker:
    global _worker
    _worker = _Worker(payload)
    return _worker


def _play_local(seeds: Sequence[int]) -> Rows:
    assert _worker is not None
    return _worker.play(seeds)


def generate(
    payload: dict[str, Any],
    tasks: Sequence[Sequence[int]],
    backend: Backend,
    workers: int,
    progress: Callable[[Rows], None] | None = None,
) -> Rows:
    """Every task's games (``payload``: game, options, search settings, network); rows in task order."""
    if backend.is_ray:
        key = f"exit-{os.getpid()}-{id(payload)}"
        return Rows.concat(map_chunks(backend, workers, key, _init, payload, _Worker.play, tasks, progress, len(tasks)))
    if workers <= 1 or len(tasks) <= 1:
        worker = _init(payload)
        out = []
        for t in tasks:
            out.append(worker.play(t))
            if progress:
                progress(out[-1])
        return Rows.concat(out)
    from jericho_env.processes import WorkerPool

    out = []
    count = min(workers, len(tasks))
    with WorkerPool(count, _init, (payload,), "expert-iteration worker", preload=_PRELOAD) as pool:
        for rows in pool.imap(_play_local, tasks, describe=lambda chunk: f"the games of seeds {list(chunk[0])}"):
            out.append(rows)
            if progress:
                progress(rows)
    return Rows.concat(out)


# what the fork server imports once, so that each worker starts without importing it again
_PRELOAD = ("torch", "experiments.training.exit.play", "agents.exit", "agents.search.compiled", "agents.*")


__all__ = ["Rows", "SearchSettings", "generate", "network_from_payload", "network_payload"]
