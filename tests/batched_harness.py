"""Plays seeded games through a game's compiled batched rules and its Python rules side by side.

``play_both(game_id, options, games, seed)`` runs ``games`` games in batches: half of each batch starts from
the kernels' own deals (turned into Python states by ``from_batched``), half from the Python rules'
``initial_state`` (put into the rows by ``to_batched``). Every step, uniformly random legal actions are
played through both, and for every game the harness compares, bit for bit: the state (``from_batched``'s
fields against the Python state's, and where any differs, ``rules.to_dict`` of both), the seat to move, the
legal mask (the legal-action set), the observation of the seat to move (as uint32 bits; with ``all_seats``,
every seat's observation, to move or not), and at the end the returns. The first difference
fails with the game, the step, the actions so far and what differs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from jericho_env.envs.batched import BatchedEnv, random_actions


def _fail(what: str, game: int, step: int, history: list[int], got: Any, want: Any) -> None:
    raise AssertionError(
        f"{what} differs in game {game} at step {step} (actions so far {history}):\n kernels: {got}\n python:  {want}"
    )


def _same(a: Any, b: Any) -> bool:
    """Whether two states of a game hold equal fields: a quick check, where equal fields mean equal ``to_dict``.

    Grid's ``allowed`` means something on frontier cells only (and is not saved): it is compared there."""
    for name in getattr(type(a), "__slots__", None) or vars(a):
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not np.array_equal(x, y):
                return False
        elif x != y and not (name == "allowed" and all(x[cell] == y[cell] for cell in a.frontier)):
            return False
    return True


def _dict_diff(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = sorted(set(a) | set(b))
    return ", ".join(f"{k}: {a.get(k)!r} != {b.get(k)!r}" for k in keys if a.get(k) != b.get(k))


def play_both(
    game_id: str, options: dict[str, Any], games: int, seed: int, batch: int = 250, all_seats: bool = False
) -> dict[str, int]:
    """Play ``games`` seeded games through the kernels and the Python rules, comparing every step; counts back."""
    env = BatchedEnv(game_id, batch, compiled=True, check=True, copy=False, **options)
    rules, game = env.rules, env.game
    rng = np.random.default_rng([seed, 1])
    deal_rng = np.random.default_rng([seed, 2])
    played = steps = 0
    chunk = 0
    while played < games:
        n = min(batch, games - played)
        env.reset(seed=seed * 1_000_003 + chunk)
        chunk += 1
        python: list[Any] = []
        for i in range(n):
            if i % 2:  # a Python deal into the row
                state = rules.initial_state(deal_rng)
                game.to_batched(state, env.states, i)
                python.append(state)
            else:  # the kernels' deal into Python
                python.append(game.from_batched(env.states, i))
        rows = np.arange(n, dtype=np.int64)
        current = np.empty(n, dtype=np.int64)
        returns = np.empty((n, env.num_players), dtype=np.float64)
        masks = np.empty((n, env.num_actions), dtype=np.int8)
        obs = np.empty((n, env.observation_size), dtype=np.float32)
        history: list[list[int]] = [[] for _ in range(n)]
        live = rows.copy()
        step = 0
        while len(live):
            game.status(env.states, live, current[: len(live)], returns[: len(live)])
            game.masks(env.states, live, masks[: len(live)])
            cur = current[: len(live)]
            game.observe(env.states, live, np.maximum(cur, 0), obs[: len(live)])
            for k, i in enumerate(live):
                s = python[i]
                state = game.from_batched(env.states, int(i))
                if not _same(state, s):  # the fields differ: the state's full text decides
                    got, want = rules.to_dict(state), rules.to_dict(s)
                    if got != want:
                        _fail("state", int(i), step, history[i], _dict_diff(got, want), "")
                if int(cur[k]) != rules.current_player(s):
                    _fail("seat to move", int(i), step, history[i], int(cur[k]), rules.current_player(s))
                if cur[k] < 0:
                    if not np.array_equal(returns[k], np.asarray(rules.returns(s), dtype=np.float64)):
                        _fail("returns", int(i), step, history[i], returns[k].tolist(), rules.returns(s))
                    continue
                legal = np.flatnonzero(masks[k]).tolist()
                if legal != rules.legal_actions(s):
                    _fail("legal actions", int(i), step, history[i], legal, rules.legal_actions(s))
                want_obs = rules.observe(s, int(cur[k]))
                if not np.array_equal(obs[k].view(np.uint32), want_obs.view(np.uint32)):
                    diff = np.flatnonzero(obs[k].view(np.uint32) != want_obs.view(np.uint32))
                    names = [rules.layout.name_of(int(j)) if hasattr(rules.layout, "name_of") else j for j in diff[:5]]
                    _fail("observation", int(i), step, history[i], (diff[:5].tolist(), names), want_obs[diff[:5]])
            if all_seats:
                _compare_every_seat(env, python, live, step, history)
            going = live[cur >= 0]
            if not len(going):
                break
            actions = random_actions(masks[: len(live)][cur >= 0], rng)
            game.apply(env.states, going, actions)
            for i, a in zip(going, actions, strict=True):
                rules.apply(python[i], int(a))  # the checked path: an illegal mask bit fails here
                history[i].append(int(a))
            steps += len(going)
            live = going
            step += 1
        played += n
    return {"games": played, "steps": steps}


def _compare_every_seat(
    env: BatchedEnv, python: list[Any], live: np.ndarray, step: int, history: list[list[int]]
) -> None:
    """Every seat's observation of every live row, kernels against rules, bit for bit."""
    rules, game = env.rules, env.game
    obs = np.empty((len(live), env.observation_size), dtype=np.float32)
    for seat in range(env.num_players):
        game.observe(env.states, live, np.full(len(live), seat, dtype=np.int64), obs)
        for k, i in enumerate(live):
            want = rules.observe(python[i], seat)
            if not np.array_equal(obs[k].view(np.uint32), want.view(np.uint32)):
                diff = np.flatnonzero(obs[k].view(np.uint32) != want.view(np.uint32))
                where = [(int(j), _field_of(rules.layout, int(j))) for j in diff[:5]]
                _fail(
                    f"observation of seat {seat}", int(i), step, history[i], (where, obs[k][diff[:5]]), want[diff[:5]]
                )


def _field_of(layout: Any, index: int) -> str:
    for name, sl in layout.slices.items():
        if sl.start <= index < sl.stop:
            return f"{name}[{index - sl.start}]"
    return "?"


__all__ = ["play_both"]
