"""Compiled search: ISMCTS and information-set PUCT over a game's row kernels, in Numba.

The searches of ``agents.search.engine.ISMCTS`` and ``agents.search.puct.PUCTSearch`` (their docstrings say
the algorithms), with the tree and every simulation in compiled code. A game takes part through its
``RowKernels`` (``jericho_env.core.batched``); the drivers receive the kernels' machine-code addresses in an
int64 array and call them through ``agents.search.row_calls``, so one cached ``@njit`` driver serves every game.

The tree (``Tree``) is a set of arrays: per node its key, player, edges and selection count (``total``, also
every action's availability: a node's legal set is fixed by its key); per edge the action, visits, summed
value and prior; an open-addressing table maps keys to nodes. A key is a 128-bit hash (``obs_key``) of the
player's observation, salted with the player and the root's index; the Python searches key by the bytes
themselves, so both tell the same information states apart up to a hash collision.

* ``CompiledISMCTS``: ISMCTS with UCB or, with a prior, the PUCT rule of ``ISMCTS._select_prior``; rollouts
  uniformly random or by a compiled ``RowPolicy``, optionally cut at ``rollout_depth`` and valued there.
* ``CompiledPUCT``: information-set PUCT for many roots at once: a compiled round descends every root's tree
  to a leaf and writes the leaves' rows, Python calls the evaluator once for all of them, and the next round
  expands those leaves and backs their values up.

Randomness comes from per-root SplitMix64 streams seeded from the search's generator; the Python searches
draw the same numbers in the same order and both see legal actions ascending, so a seed gives the same
simulations in each (``tests/test_search_twins.py``). The searches never change the states they are given.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.search import row_calls
from agents.search.engine import RowPolicy, check_settings, compiled_kernels
from agents.search.puct import Evaluator, SearchResult, check_puct
from jericho_env.core.batched import BatchedGame, RowKernels
from jericho_env.core.kernels import NO_PARAMS, NUMBA, below, njit, row_seeds
from jericho_env.core.redeal import NoConsistentDealError
from jericho_env.core.rules import Rules

if NUMBA:
    from agents.search.row_calls import (
        call_apply,
        call_determinize,
        call_legal,
        call_observe,
        call_policy,
        call_status,
        call_value,
    )

# node columns (int64) and edge columns (int64: action, visits; float64: summed value, prior)
_EDGE0, _NEDGES, _TOTAL, _PLAYER = range(4)
_ACTION, _VISITS = range(2)
_VSUM, _PRIOR = range(2)
# driver return codes below zero
NO_DEAL, TOO_DEEP, LEGAL_CHANGED = -1, -2, -3

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)
_R31, _R27, _R33, _R29, _R32, _U32 = (np.uint64(v) for v in (31, 27, 33, 29, 32, 32))
_U64 = np.uint64(64)


# ---------------------------------------------------------------------------------------------- keys
@njit(cache=True)
def _rotl(x: np.uint64, r: np.uint64) -> np.uint64:
    return (x << r) | (x >> (_U64 - r))


@njit(cache=True)
def _avalanche(h: np.uint64) -> np.uint64:
    h ^= h >> _R33
    h *= _P2
    h ^= h >> _R29
    h *= _P3
    h ^= h >> _R32
    return h


@njit(cache=True)
def salt(root: int, player: int) -> np.uint64:
    """The seed of a key: distinct for every (root, player)."""
    return _avalanche(np.uint64(root) * _P4 + np.uint64(player + 1) * _P1)


@njit(cache=True)
def obs_key(obs: np.ndarray, seed: np.uint64) -> tuple[np.uint64, np.uint64]:
    """A 128-bit hash of the float32 bits of ``obs``: two lanes of xxHash64's round over (position, word) pairs.

    The row is read as 64-bit words and only the words that are not zero enter, each after its position, so
    the hash is of the whole row (an observation is the list of its non-zero words and their positions) and
    costs little on sparse rows (grid's 8,731 floats hold a few hundred non-zeros).
    """
    words = obs.view(np.uint32)
    n = words.shape[0]
    a = seed ^ _P5
    b = seed + _P1
    i = 0
    while i < n:
        w = np.uint64(words[i])
        if i + 1 < n:
            w |= np.uint64(words[i + 1]) << _U32
        if w:
            at = np.uint64(i)
            a = _rotl(a + at * _P2, _R31) * _P1
            b = _rotl(b + at * _P4, _R27) * _P3
            a = _rotl(a + w * _P2, _R31) * _P1
            b = _rotl(b + w * _P4, _R27) * _P3
        i += 2
    a ^= np.uint64(n)
    b ^= np.uint64(n)
    return _avalanche(a), _avalanche(b)


# ---------------------------------------------------------------------------------------------- the tree
@njit(cache=True)
def _find(keys: np.ndarray, slots: np.ndarray, hi: np.uint64, lo: np.uint64) -> tuple[int, int]:
    """(the key's slot, its node) or (the free slot where it goes, -1)."""
    mask = slots.shape[0] - 1
    i = np.int64(lo & np.uint64(mask))
    while True:
        node = slots[i]
        if node < 0:
            return i, -1
        if keys[node, 0] == hi and keys[node, 1] == lo:
            return i, node
        i = (i + 1) & mask


@njit(cache=True)
def _add_node(tree: tuple, slot: int, hi: np.uint64, lo: np.uint64, player: int, legal: np.ndarray, n: int) -> int:
    """A new node of ``tree`` (``Tree.arrays()``) for the key in ``slot``, one edge per legal action (no visits, no
    prior)."""
    keys, nodes, _, edges, stats, slots, count = tree
    node = count[0]
    count[0] += 1
    e0 = count[1]
    count[1] += n
    keys[node, 0] = hi
    keys[node, 1] = lo
    nodes[node, _EDGE0] = e0
    nodes[node, _NEDGES] = n
    nodes[node, _TOTAL] = 0
    nodes[node, _PLAYER] = player
    for j in range(n):
        edges[e0 + j, _ACTION] = legal[j]
        edges[e0 + j, _VISITS] = 0
        stats[e0 + j, _VSUM] = 0.0
        stats[e0 + j, _PRIOR] = 0.0
    slots[slot] = node
    return node


@njit(cache=True)
def _rehash(keys: np.ndarray, nodes_used: int, slots: np.ndarray) -> None:
    slots[:] = -1
    for node in range(nodes_used):
        slot, _ = _find(keys, slots, keys[node, 0], keys[node, 1])
        slots[slot] = node


class Tree:
    """A search tree as arrays (see the module docstring); grows on demand (``reserve``), cleared per search."""

    def __init__(self, nodes: int = 1024, edges: int = 8192) -> None:
        self.keys = np.zeros((nodes, 2), dtype=np.uint64)
        self.nodes = np.zeros((nodes, 4), dtype=np.int64)
        self.node_value = np.zeros(nodes, dtype=np.float64)
        self.edges = np.zeros((edges, 2), dtype=np.int64)
        self.stats = np.zeros((edges, 2), dtype=np.float64)
        self.slots = np.full(_table_size(nodes), -1, dtype=np.int64)
        self.count = np.zeros(2, dtype=np.int64)  # nodes, edges in use

    def clear(self) -> None:
        """No nodes."""
        self.count[:] = 0
        self.slots[:] = -1

    @property
    def size(self) -> int:
        """Nodes in use."""
        return int(self.count[0])

    def reserve(self, nodes: int, edges: int) -> None:
        """Room for ``nodes`` more nodes and ``edges`` more edges (arrays doubled as needed, the table rebuilt)."""
        used_n, used_e = int(self.count[0]), int(self.count[1])
        if used_n + nodes > len(self.nodes):
            cap = max(2 * len(self.nodes), used_n + nodes)
            self.keys = _grown(self.keys, cap)
            self.nodes = _grown(self.nodes, cap)
            self.node_value = _grown(self.node_value, cap)
            self.slots = np.full(_table_size(cap), -1, dtype=np.int64)
            _rehash(self.keys, used_n, self.slots)
        if used_e + edges > len(self.edges):
            cap = max(2 * len(self.edges), used_e + edges)
            self.edges = _grown(self.edges, cap)
            self.stats = _grown(self.stats, cap)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays the drivers take, in their order."""
        return self.keys, self.nodes, self.node_value, self.edges, self.stats, self.slots, self.count

    def children(self, node: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(actions, visits, summed values, priors) of ``node``'s edges (copies)."""
        e0, n = int(self.nodes[node, _EDGE0]), int(self.nodes[node, _NEDGES])
        return (
            self.edges[e0 : e0 + n, _ACTION].copy(),
            self.edges[e0 : e0 + n, _VISITS].copy(),
            self.stats[e0 : e0 + n, _VSUM].copy(),
            self.stats[e0 : e0 + n, _PRIOR].copy(),
        )

    def totals(self) -> np.ndarray:
        """Each node's selection count (``total``), for the nodes in use."""
        return self.nodes[: self.size, _TOTAL].copy()

    def visit_sums(self) -> np.ndarray:
        """Each node's summed edge visits, for the nodes in use."""
        used = self.nodes[: self.size]
        return np.array([self.edges[e0 : e0 + n, _VISITS].sum() for e0, n in used[:, :2].tolist()], dtype=np.int64)


def _table_size(nodes: int) -> int:
    return 1 << max(4, int(2 * nodes - 1).bit_length())  # a power of two, at least twice the nodes


def _grown(a: np.ndarray, rows: int) -> np.ndarray:
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


# ---------------------------------------------------------------------------------------------- ISMCTS
@njit(cache=True)
def _ismcts(
    fns: np.ndarray,
    root: np.ndarray,
    params: np.ndarray,
    pparams: np.ndarray,
    seat: int,
    sims: int,
    uct_c: float,
    use_prior: bool,
    policy_rollout: bool,
    rollout_depth: int,
    shape: np.ndarray,
    stream: np.ndarray,
    tree: tuple,
) -> int:
    """Up to ``sims`` ISMCTS simulations from ``root[0]`` for ``seat``; the number run, or a code below zero.

    ``fns``: the addresses of the row functions and policies (``agents.search.row_calls``); ``shape``: (num_actions,
    num_players, observation size, longest path); ``tree``: ``Tree.arrays()``. Stops early when the tree has no room
    for one more simulation (the caller grows it and calls again).
    """
    keys, nodes, _, edges, stats, slots, count = tree
    status, legal, apply, observe = fns[0], fns[1], fns[2], fns[3]
    determinize, prior_fn, rollout_fn, value_fn = fns[4], fns[5], fns[6], fns[7]
    num_actions, num_players, obs_size, max_depth = shape[0], shape[1], shape[2], shape[3]
    work = np.empty(1, dtype=root.dtype)
    obs = np.empty(obs_size, dtype=np.float32)
    buf = np.empty(num_actions, dtype=np.int64)
    weights = np.empty(num_actions, dtype=np.float64)
    ret = np.zeros(num_players, dtype=np.float64)
    path_edge = np.empty(max_depth, dtype=np.int64)
    path_player = np.empty(max_depth, dtype=np.int64)
    call_observe(observe, root, 0, params, seat, obs)
    root_hi, root_lo = obs_key(obs, salt(0, seat))
    done = 0
    while done < sims:
        if count[0] + 1 > keys.shape[0] or count[1] + num_actions > edges.shape[0]:
            break
        if not call_determinize(determinize, root, 0, params, seat, work, 0, stream, 0):
            return NO_DEAL
        expanded = False
        at_root = True
        cut = False
        depth = 0
        plen = 0
        while True:
            player = call_status(status, work, 0, params, ret)
            if player < 0:
                break
            n = call_legal(legal, work, 0, params, buf)
            if expanded:  # past the new node: the rollout policy plays on
                if rollout_depth >= 0 and depth >= rollout_depth:
                    cut = True
                    break
                if policy_rollout:  # a policy takes the legal actions in any order
                    call_observe(observe, work, 0, params, player, obs)
                    a = call_policy(rollout_fn, obs, buf, n, pparams, stream, 0, weights)
                else:
                    _ascending(buf, n)
                    a = buf[below(stream, 0, n)]
                call_apply(apply, work, 0, params, a)
                depth += 1
                continue
            _ascending(buf, n)
            if at_root:
                hi, lo = root_hi, root_lo
                if use_prior:
                    call_observe(observe, work, 0, params, player, obs)
                at_root = False
            else:
                call_observe(observe, work, 0, params, player, obs)
                hi, lo = obs_key(obs, salt(0, player))
            slot, node = _find(keys, slots, hi, lo)
            if node < 0:
                node = _add_node(tree, slot, hi, lo, player, buf, n)
                expanded = True
                if use_prior:
                    call_policy(prior_fn, obs, buf, n, pparams, stream, 0, weights)
                    _set_prior(weights, n, stats, nodes[node, _EDGE0])
            elif nodes[node, _NEDGES] != n:
                return LEGAL_CHANGED
            e0 = nodes[node, _EDGE0]
            nodes[node, _TOTAL] += 1
            if use_prior:  # Q 0 for unvisited actions; the node's total is its availability
                j = _select_puct(edges, stats, e0, n, nodes[node, _TOTAL], 0.0, uct_c)
            else:
                j = _select_ucb(edges, stats, e0, n, nodes[node, _TOTAL], uct_c, stream)
            if plen >= max_depth:
                return TOO_DEEP
            path_edge[plen] = e0 + j
            path_player[plen] = player
            plen += 1
            call_apply(apply, work, 0, params, edges[e0 + j, _ACTION])
        if cut:
            call_value(value_fn, work, 0, params, ret)
        for i in range(plen):
            edges[path_edge[i], _VISITS] += 1
            stats[path_edge[i], _VSUM] += ret[path_player[i]]
        done += 1
    return done


@njit(cache=True)
def _ascending(legal: np.ndarray, n: int) -> None:
    """``legal[:n]`` in ascending order, as the Python rules list legal actions (most games' kernels do already)."""
    for i in range(1, n):
        if legal[i] < legal[i - 1]:
            legal[:n].sort()
            return


@njit(cache=True)
def _set_prior(weights: np.ndarray, n: int, stats: np.ndarray, e0: int) -> None:
    """The prior policy's weights over the node's legal actions, normalised (``ISMCTS._select_prior``)."""
    total = 0.0
    for j in range(n):
        total += weights[j]
    if total == 0.0:
        total = 1.0
    for j in range(n):
        stats[e0 + j, _PRIOR] = weights[j] / total


@njit(cache=True)
def _select_ucb(edges: np.ndarray, stats: np.ndarray, e0: int, n: int, avail: int, c: float, stream: np.ndarray) -> int:
    """``ISMCTS._select``: an untried action at random, else the best UCB score (ties: the first)."""
    untried = 0
    for j in range(n):
        if edges[e0 + j, _VISITS] == 0:
            untried += 1
    if untried:
        pick = below(stream, 0, untried)
        for j in range(n):
            if edges[e0 + j, _VISITS] == 0:
                if pick == 0:
                    return j
                pick -= 1
    log_avail = math.log(avail)
    best = 0
    best_score = -np.inf
    for j in range(n):
        visits = edges[e0 + j, _VISITS]
        score = stats[e0 + j, _VSUM] / visits + c * math.sqrt(log_avail / visits)
        if score > best_score:
            best, best_score = j, score
    return best


# ---------------------------------------------------------------------------------------------- PUCT
@njit(cache=True)
def _new_leaf(
    fns: np.ndarray, states: np.ndarray, r: int, params: np.ndarray, player: int, value_all: bool, leaves: tuple,
    outs: tuple, b: int,
) -> int:  # fmt: skip
    """Root ``r``'s leaf at ``states[r]``, its player's observation already in ``out_obs[b]``: its legal actions
    into ``leaf_legal[r]``, its rows written (every other seat's observation too with ``value_all``); the next row."""
    legal, observe = fns[1], fns[3]
    leaf_kind, leaf_key, leaf_player, leaf_ret, leaf_n, leaf_legal, row_of = leaves
    out_obs, out_mask, out_mover, out_owner = outs
    n = call_legal(legal, states, r, params, leaf_legal[r])
    _ascending(leaf_legal[r], n)
    hi, lo = obs_key(out_obs[b], salt(r, player))
    leaf_kind[r] = 2
    leaf_key[r, 0] = hi
    leaf_key[r, 1] = lo
    leaf_player[r] = player
    leaf_n[r] = n
    row_of[r] = b
    out_mask[b, :] = False
    for j in range(n):
        out_mask[b, leaf_legal[r, j]] = True
    out_mover[b] = True
    out_owner[b] = r
    b += 1
    if value_all:  # value-only rows: the other seats' observations
        for q in range(leaf_ret.shape[1]):
            if q != player:
                call_observe(observe, states, r, params, q, out_obs[b])
                out_mask[b, :] = False
                out_mover[b] = False
                out_owner[b] = r
                b += 1
    return b


@njit(cache=True)
def _puct_roots(
    fns: np.ndarray,
    roots: np.ndarray,
    params: np.ndarray,
    seats: np.ndarray,
    value_all: bool,
    leaves: tuple,
    path_len: np.ndarray,
    outs: tuple,
) -> int:
    """Every root as a leaf to evaluate (its seat's observation; every seat's with ``value_all``); rows written."""
    b = 0
    for r in range(roots.shape[0]):
        path_len[r] = 0
        call_observe(fns[3], roots, r, params, seats[r], outs[0][b])
        b = _new_leaf(fns, roots, r, params, seats[r], value_all, leaves, outs, b)
    return b


@njit(cache=True)
def _set_evaluated(priors: np.ndarray, j: int, legal: np.ndarray, n: int, stats: np.ndarray, e0: int) -> None:
    """The evaluator's prior over the legal actions, normalised (uniform if it sums to 0 or is not finite)."""
    total = 0.0
    for k in range(n):
        total += priors[j, legal[k]]
    ok = total > 0 and np.isfinite(total)
    for k in range(n):
        stats[e0 + k, _PRIOR] = priors[j, legal[k]] / total if ok else 1.0 / n


@njit(cache=True)
def _expand_all(
    value_all: bool, root_node: np.ndarray, tree: tuple, paths: tuple, leaves: tuple, priors: np.ndarray,
    values: np.ndarray,
) -> None:  # fmt: skip
    """Every pending leaf: a new node from the evaluator's rows (or the game's returns), values backed up."""
    keys, nodes, node_value, edges, stats, slots, _ = tree
    _, path_node, path_edge, path_player, path_len = paths
    leaf_kind, leaf_key, leaf_player, leaf_ret, leaf_n, leaf_legal, row_of = leaves
    num_players = leaf_ret.shape[1]
    vals = np.zeros(num_players, dtype=np.float64)
    for r in range(leaf_kind.shape[0]):
        kind = leaf_kind[r]
        if kind == 0:
            continue
        if kind == 2:
            j = row_of[r]
            player = leaf_player[r]
            slot, node = _find(keys, slots, leaf_key[r, 0], leaf_key[r, 1])
            if node < 0:
                node = _add_node(tree, slot, leaf_key[r, 0], leaf_key[r, 1], player, leaf_legal[r], leaf_n[r])
                _set_evaluated(priors, j, leaf_legal[r], leaf_n[r], stats, nodes[node, _EDGE0])
                node_value[node] = values[j]
            vals[player] = values[j]
            if value_all:
                row = j + 1
                for q in range(num_players):
                    if q != player:
                        vals[q] = values[row]
                        row += 1
            else:
                vals[1 - player] = -values[j]
            if path_len[r] == 0:
                root_node[r] = node
        else:
            for q in range(num_players):
                vals[q] = leaf_ret[r, q]
        for i in range(path_len[r]):
            e = path_edge[r, i]
            edges[e, _VISITS] += 1
            stats[e, _VSUM] += vals[path_player[r, i]]
            nodes[path_node[r, i], _TOTAL] += 1
        leaf_kind[r] = 0


@njit(cache=True)
def _select_puct(edges: np.ndarray, stats: np.ndarray, e0: int, n: int, total: int, value: float, c: float) -> int:
    """``Q + c * P * sqrt(max(N, 1)) / (1 + N(a))``, an unvisited action's Q ``value`` (``PUCTSearch``: the node's;
    ``ISMCTS._select_prior``: 0)."""
    root = math.sqrt(max(total, 1))
    best = 0
    best_score = -np.inf
    for j in range(n):
        visits = edges[e0 + j, _VISITS]
        q = stats[e0 + j, _VSUM] / visits if visits > 0 else value
        score = q + c * stats[e0 + j, _PRIOR] * root / (1.0 + visits)
        if score > best_score:
            best, best_score = j, score
    return best


@njit(cache=True)
def _puct_round(
    fns: np.ndarray,
    roots: np.ndarray,
    params: np.ndarray,
    seats: np.ndarray,
    root_node: np.ndarray,
    live: np.ndarray,
    stream: np.ndarray,
    c_puct: float,
    value_all: bool,
    expand: bool,
    descend: bool,
    tree: tuple,
    paths: tuple,
    leaves: tuple,
    priors: np.ndarray,
    values: np.ndarray,
    outs: tuple,
) -> int:
    """One round: expand the pending leaves and back up (``expand``), then descend every live root (``descend``).

    Expansion reads the evaluator's ``priors`` and ``values`` at the rows ``row_of`` gave each leaf; a leaf with
    an empty path is a root (``root_node`` gets it). Descent writes the new leaves' rows into ``out_obs``,
    ``out_mask``, ``out_mover``, ``out_owner`` and returns how many (a code below zero if a determinization
    finds no deal or a path outgrows ``path_edge``). ``tree``: ``Tree.arrays()``; ``paths``, ``leaves`` and ``outs``:
    the arrays ``CompiledPUCT.search_rows`` makes, in its order.
    """
    status, apply, observe, determinize = fns[0], fns[2], fns[3], fns[4]
    keys, nodes, node_value, edges, stats, slots, _ = tree
    work, path_node, path_edge, path_player, path_len = paths
    leaf_kind, leaf_ret = leaves[0], leaves[3]
    out_obs = outs[0]
    num_players = leaf_ret.shape[1]
    if expand:
        _expand_all(value_all, root_node, tree, paths, leaves, priors, values)
    if not descend:
        return 0
    ret = np.zeros(num_players, dtype=np.float64)
    max_depth = path_edge.shape[1]
    b = 0
    for r in range(roots.shape[0]):
        path_len[r] = 0
        if not live[r]:
            continue
        if not call_determinize(determinize, roots, r, params, seats[r], work, r, stream, r):
            return NO_DEAL
        node = root_node[r]
        player = seats[r]
        plen = 0
        while True:
            e0 = nodes[node, _EDGE0]
            j = _select_puct(edges, stats, e0, nodes[node, _NEDGES], nodes[node, _TOTAL], node_value[node], c_puct)
            if plen >= max_depth:
                return TOO_DEEP
            path_node[r, plen] = node
            path_edge[r, plen] = e0 + j
            path_player[r, plen] = player
            plen += 1
            call_apply(apply, work, r, params, edges[e0 + j, _ACTION])
            player = call_status(status, work, r, params, ret)
            if player < 0:
                leaf_kind[r] = 1
                for q in range(num_players):
                    leaf_ret[r, q] = ret[q]
                break
            call_observe(observe, work, r, params, player, out_obs[b])
            hi, lo = obs_key(out_obs[b], salt(r, player))
            _, child = _find(keys, slots, hi, lo)
            if child < 0:
                b = _new_leaf(fns, work, r, params, player, value_all, leaves, outs, b)
                break
            node = child
        path_len[r] = plen
    return b


# ---------------------------------------------------------------------------------------------- building
def policy_signature(params: np.ndarray) -> Any:
    """The Numba signature of a ``RowPolicy`` function reading ``params``."""
    from numba import typeof, types

    return types.int64(
        types.float32[::1], types.int64[::1], types.int64, typeof(params), types.uint64[::1], types.int64,
        types.float64[::1],
    )  # fmt: skip


def value_signature(dtype: np.dtype[Any], params: np.ndarray) -> Any:
    """The Numba signature of a position value: ``(states, row, params, out float64[::1])``, each seat's value."""
    from numba import typeof, types

    return types.void(typeof(np.zeros(1, dtype=dtype)), types.int64, typeof(params), types.float64[::1])


_NO_POLICY_PARAMS = np.zeros(1, dtype=NO_PARAMS)


def _addresses(
    game: BatchedGame[Any],
    kernels: RowKernels,
    prior: RowPolicy | None = None,
    rollout: RowPolicy | None = None,
    value: Any = None,
) -> np.ndarray:
    """The addresses of the row functions, the policies' functions and the value (0 where absent), for the drivers.

    Each is looked up for the signature it must have been compiled with (``row_signatures``,
    ``policy_signature``, ``value_signature``): a function compiled for anything else is refused here.
    """
    from numba import typeof

    from jericho_env.core.kernels import row_signatures

    sigs = row_signatures(game.dtype, kernels.params.dtype)
    assert sigs is not None
    if typeof(kernels.params) != sigs.params_type:
        raise TypeError(f"{game.info.game_id}: row_kernels().params must be a one-element array of its params dtype")
    out = np.zeros(len(row_calls.SLOTS), dtype=np.int64)
    for slot, fn, sig in zip(
        range(5),
        (kernels.status, kernels.legal, kernels.apply, kernels.observe, kernels.determinize),
        (sigs.status, sigs.legal, sigs.apply, sigs.observe, sigs.determinize),
        strict=True,
    ):
        out[slot] = row_calls.jit_address(fn, sig)
    if prior is not None:
        out[row_calls.PRIOR] = row_calls.jit_address(prior.prior, policy_signature(prior.params))
    if rollout is not None:
        out[row_calls.ROLLOUT] = row_calls.jit_address(rollout.rollout, policy_signature(rollout.params))
    if value is not None:
        out[row_calls.VALUE] = row_calls.jit_address(value, value_signature(game.dtype, kernels.params))
    return out


ENGINES = ("auto", "python", "compiled")

# per game, where its compiled position value is built ("module:function"; the function takes (rules, game) and
# returns a value function compiled with value_signature)
ROW_VALUES: dict[str, str] = {"grid": "agents.search.row_values:grid_points"}
_POLICIES: dict[Any, tuple[Any, Any]] = {}


def check_engine(engine: str, who: str) -> str:
    """``engine`` if it is one of ``ENGINES``, else a ``ValueError`` naming them."""
    if engine not in ENGINES:
        raise ValueError(f"{who}: engine={engine!r} is not allowed; use one of {', '.join(ENGINES)}")
    return engine


def _load(spec: str | None, rules: Rules[Any], game: BatchedGame[Any]) -> Any:
    if spec is None:
        return None
    import importlib

    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)(rules, game)


def greedy_row_policy(rules: Rules[Any]) -> RowPolicy | None:
    """The game's greedy heuristic as a ``RowPolicy`` (``agents.greedy.row_functions``: prior its scores, rollout
    its move), or None; compiled for its params (once per record type in a process) where Numba is installed."""
    from agents.greedy import row_functions

    found = row_functions(rules)
    if found is None:
        return None
    prior, rollout, params = found
    if not NUMBA:
        return RowPolicy(prior, rollout, params)
    key = (prior, rollout, params.dtype)
    if key not in _POLICIES:
        sig = policy_signature(params)
        _POLICIES[key] = tuple(None if f is None else njit(sig, cache=True)(f) for f in (prior, rollout))  # type: ignore[assignment]
    return RowPolicy(*_POLICIES[key], params)


def row_value(rules: Rules[Any], game: BatchedGame[Any]) -> Any:
    """The compiled position value of ``ismcts.EVALUATORS`` for the game (``value_signature``), or None."""
    return _load(ROW_VALUES.get(rules.info.game_id), rules, game)


def make_puct(rules: Rules[Any], evaluator: Evaluator, *settings: Any, engine: str = "auto", **named: Any) -> Any:
    """``CompiledPUCT`` where the game's row kernels are there (``engine`` "auto", "compiled"), else ``PUCTSearch``,
    either given ``settings`` and ``named``: simulations, c_puct, value_rows, rng, dirichlet_alpha and _fraction."""
    from agents.search.puct import PUCTSearch

    check_engine(engine, "puct")
    found = None if engine == "python" else compiled_kernels(rules)
    if found is None:
        if engine == "compiled":
            raise ValueError(
                f"puct: engine='compiled' is not available for {rules.info.game_id!r}: the game has no compiled "
                "row kernels (or Numba is not installed)"
            )
        return PUCTSearch(rules, evaluator, *settings, **named)
    game, kernels = found
    return CompiledPUCT(rules, game, kernels, evaluator, *settings, **named)


def _check_code(code: int, what: str) -> None:
    if code == NO_DEAL:
        raise NoConsistentDealError(f"{what}: no deal of the unseen cards meets what the searching seat saw")
    if code == TOO_DEEP:
        raise RuntimeError(f"{what}: a simulation outgrew the game's max_game_length")
    if code == LEGAL_CHANGED:
        raise RuntimeError(f"{what}: two states with the same observation have different legal actions")


class _Addressed:
    """A compiled search holding the machine-code addresses of its game's kernels and ``_pieces`` (policies, value)."""

    game: BatchedGame[Any]
    kernels: RowKernels
    _pieces: tuple[Any, ...] = ()

    def __getstate__(self) -> dict[str, Any]:
        # machine-code addresses belong to this process: another one looks them up again (__setstate__)
        return {k: v for k, v in self.__dict__.items() if k != "_fns"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._fns = _addresses(self.game, self.kernels, *self._pieces)


# ---------------------------------------------------------------------------------------------- ISMCTS
class CompiledISMCTS(_Addressed):
    """ISMCTS (``agents.search.engine.ISMCTS``) compiled: the same settings, ``search(state, seat)`` the same call.

    ``prior`` (a ``RowPolicy``) makes selection PUCT with the policy's weights; ``rollout`` (a ``RowPolicy``)
    replaces uniformly random rollouts by the policy's moves; ``rollout_depth`` with ``value`` (a compiled
    position value, ``value_signature``) cuts rollouts after that many moves and values the position there.
    """

    def __init__(
        self,
        rules: Rules[Any],
        game: BatchedGame[Any],
        kernels: RowKernels,
        simulations: int | None = 300,
        time_limit: float | None = None,
        uct_c: float = 0.7,
        rng: np.random.Generator | None = None,
        rollout_depth: int | None = None,
        value: Any = None,
        prior: RowPolicy | None = None,
        rollout: RowPolicy | None = None,
    ) -> None:
        simulations, time_limit, uct_c, rollout_depth = check_settings(
            "ISMCTS", simulations, time_limit, uct_c, rollout_depth
        )
        if simulations is None and time_limit is None:
            raise ValueError("ISMCTS needs a budget: simulations, time_limit or both")
        if (rollout_depth is None) != (value is None):
            raise ValueError("ISMCTS: rollout_depth and value go together (cut rollouts short, then value)")
        if prior is not None and rollout is not None and prior.params is not rollout.params:
            raise ValueError("ISMCTS: a prior and a rollout policy must share their params array")
        self.rules, self.game, self.kernels = rules, game, kernels
        self.simulations, self.time_limit, self.uct_c = simulations, time_limit, float(uct_c)
        self.rng = rng if rng is not None else np.random.default_rng()
        self.rollout_depth = rollout_depth
        policy = prior if prior is not None else rollout
        self._pparams = policy.params if policy is not None else _NO_POLICY_PARAMS
        self._pieces = (prior, rollout, value)  # what the addresses are taken from (again after unpickling)
        self._fns = _addresses(game, kernels, prior, rollout, value)
        self._use_prior, self._policy_rollout = prior is not None, rollout is not None
        info = rules.info
        self._shape = np.array(
            [info.num_actions, info.num_players, info.observation_size, info.max_game_length + 1], dtype=np.int64
        )
        self._root = game.new_states(1)
        first = simulations if simulations is not None else 256
        self.tree = Tree(nodes=first + 2, edges=(first + 2) * 8 + info.num_actions)
        self.last_simulations = 0
        self.last_visits: dict[int, int] = {}  # the last search's root visits per action (empty: one legal action)
        self.last_wins: dict[int, float] = {}  # and their summed returns

    def search(self, state: Any, seat: int, started: float | None = None) -> int:
        """The action to play for ``seat`` (to move in ``state``), as ``ISMCTS.search`` (time limit included)."""
        if started is None:
            started = time.perf_counter()
        self.game.to_batched(state, self._root, 0)
        k, info = self.kernels, self.rules.info
        legal = np.empty(info.num_actions, dtype=np.int64)
        n = k.legal(self._root, 0, k.params, legal)  # the compiled rules: cheaper than the Python ones here
        if k.status(self._root, 0, k.params, np.zeros(info.num_players)) != seat or n == 0:
            raise ValueError(f"ISMCTS: seat {seat} is not to move in this state")
        if n == 1:
            self.last_simulations, self.last_visits, self.last_wins = 0, {}, {}
            return int(legal[0])
        self.run(seat, started)
        actions, visits, wins, _ = self.tree.children(0)
        self.last_visits = {int(a): int(v) for a, v in zip(actions, visits, strict=True)}
        self.last_wins = {int(a): float(w) for a, w in zip(actions, wins, strict=True)}
        means = wins / np.maximum(visits, 1)
        best = max(range(len(actions)), key=lambda j: (visits[j], means[j]))
        return int(actions[best])

    def run(self, seat: int, started: float) -> None:
        """The simulations of one move from the root row, into ``self.tree`` (node 0 is the root)."""
        stream = row_seeds(self.rng, 1)
        tree = self.tree
        tree.clear()
        deadline = None if self.time_limit is None else started + self.time_limit
        budget = self.simulations
        done = 0
        first = time.perf_counter()
        while budget is None or done < budget:
            ask = (budget - done) if budget is not None else 1 << 20
            if deadline is not None:
                now = time.perf_counter()
                if done == 0:
                    ask = min(ask, 8)
                else:  # what fits before the deadline at the mean so far, in chunks (the tree grows with them)
                    ask = min(ask, 4096, int((deadline - now) / ((now - first) / done)))
                    if ask < 1:
                        break
            tree.reserve(ask + 1, int(self._shape[0]))  # room for one simulation's new node at least
            k = _ismcts(
                self._fns, self._root, self.kernels.params, self._pparams, seat, ask, self.uct_c, self._use_prior,
                self._policy_rollout, -1 if self.rollout_depth is None else self.rollout_depth, self._shape, stream,
                tree.arrays(),
            )  # fmt: skip
            _check_code(k, f"{self.rules.info.game_id} ismcts")
            done += k
            if k < ask:  # out of room for edges: double them
                tree.reserve(0, max(len(tree.edges), int(self._shape[0])))
        self.last_simulations = done


# ---------------------------------------------------------------------------------------------- PUCT
class CompiledPUCT(_Addressed):
    """Information-set PUCT (``agents.search.puct.PUCTSearch``) compiled: the same settings and ``search`` call.

    ``search(views, seats)`` takes Python states; ``search_rows(roots, seats)`` takes them as rows of the
    game's batched states (``game.new_states``), which saves converting them.
    """

    def __init__(
        self,
        rules: Rules[Any],
        game: BatchedGame[Any],
        kernels: RowKernels,
        evaluator: Evaluator,
        simulations: int,
        c_puct: float = 1.5,
        value_rows: str = "mover",
        rng: np.random.Generator | None = None,
        dirichlet_alpha: float = 0.0,
        dirichlet_fraction: float = 0.0,
    ) -> None:
        check_puct(rules, simulations, c_puct, value_rows, dirichlet_alpha, dirichlet_fraction)
        self.rules, self.game, self.kernels = rules, game, kernels
        self.evaluator = evaluator
        self.simulations = simulations
        self.c_puct = float(c_puct)
        self.value_rows = value_rows
        self.rng = rng if rng is not None else np.random.default_rng()
        self.dirichlet_alpha = float(dirichlet_alpha)
        self.dirichlet_fraction = float(dirichlet_fraction)
        self.evaluations = 0
        self._fns = _addresses(game, kernels)
        self.tree = Tree()
        self.root_nodes = np.zeros(0, dtype=np.int64)

    def search(self, views: Sequence[Any], seats: Sequence[int]) -> list[SearchResult]:
        """Search each position ``views[k]`` for ``seats[k]`` (to move there); one result per position."""
        roots = self.game.new_states(len(views))
        for k, view in enumerate(views):
            if self.rules.current_player(view) != seats[k]:
                raise ValueError(f"position {k}: seat {seats[k]} is not to move")
            self.game.to_batched(view, roots, k)
        return self.search_rows(roots, seats)

    def search_rows(self, roots: np.ndarray, seats: Sequence[int]) -> list[SearchResult]:
        """As ``search``, for positions given as rows of the game's batched states."""
        info = self.rules.info
        kern = self.kernels
        n_roots, a, p = len(roots), info.num_actions, info.num_players
        seat_arr = np.asarray(seats, dtype=np.int64).reshape(-1)
        if seat_arr.shape != (n_roots,):
            raise ValueError(f"one seat per position: {n_roots} positions, {seat_arr.shape[0]} seats")
        ret = np.zeros(p, dtype=np.float64)
        for k in range(n_roots):
            if kern.status(roots, k, kern.params, ret) != seat_arr[k]:
                raise ValueError(f"position {k}: seat {int(seat_arr[k])} is not to move")
        value_all = self.value_rows == "all"
        rows = n_roots * (p if value_all else 1)
        depth = info.max_game_length + 1
        work = self.game.new_states(n_roots)
        path_node = np.zeros((n_roots, depth), dtype=np.int64)
        path_edge = np.zeros((n_roots, depth), dtype=np.int64)
        path_player = np.zeros((n_roots, depth), dtype=np.int64)
        path_len = np.zeros(n_roots, dtype=np.int64)
        leaf_kind = np.zeros(n_roots, dtype=np.int8)
        leaf_key = np.zeros((n_roots, 2), dtype=np.uint64)
        leaf_player = np.zeros(n_roots, dtype=np.int64)
        leaf_ret = np.zeros((n_roots, p), dtype=np.float64)
        leaf_n = np.zeros(n_roots, dtype=np.int64)
        leaf_legal = np.zeros((n_roots, a), dtype=np.int64)
        row_of = np.zeros(n_roots, dtype=np.int64)
        out_obs = np.zeros((rows, info.observation_size), dtype=np.float32)
        out_mask = np.zeros((rows, a), dtype=bool)
        out_mover = np.zeros(rows, dtype=bool)
        out_owner = np.zeros(rows, dtype=np.int64)
        root_node = np.zeros(n_roots, dtype=np.int64)
        stream = row_seeds(self.rng, n_roots)
        tree = self.tree
        tree.clear()
        tree.reserve(n_roots, n_roots * a)
        leaves = (leaf_kind, leaf_key, leaf_player, leaf_ret, leaf_n, leaf_legal, row_of)
        outs = (out_obs, out_mask, out_mover, out_owner)
        paths = (work, path_node, path_edge, path_player, path_len)
        b = _puct_roots(self._fns, roots, kern.params, seat_arr, value_all, leaves, path_len, outs)
        live = np.zeros(n_roots, dtype=bool)
        args = (roots, seat_arr, root_node, live, stream, value_all, paths, leaves, outs)
        priors, values = self._evaluate(out_obs, out_mask, out_mover, b)
        self._round(*args, priors, values, expand=True, descend=False)
        live[:] = leaf_n > 1  # a root with one legal action is not searched
        if self.dirichlet_fraction > 0:
            self._noise(root_node, live)
        self.root_nodes = root_node
        pending = False
        for _ in range(self.simulations):
            if not live.any():
                break
            tree.reserve(n_roots, n_roots * a)
            b = self._round(*args, priors, values, expand=pending, descend=True)
            priors, values = self._evaluate(out_obs, out_mask, out_mover, b)
            pending = True
        if pending:  # the last round's leaves: room for their nodes, as before every round
            tree.reserve(n_roots, n_roots * a)
            self._round(*args, priors, values, expand=True, descend=False)
        return [self._result(int(node)) for node in root_node]

    def _round(
        self,
        roots: np.ndarray,
        seats: np.ndarray,
        root_node: np.ndarray,
        live: np.ndarray,
        stream: np.ndarray,
        value_all: bool,
        paths: tuple[np.ndarray, ...],
        leaves: tuple[np.ndarray, ...],
        outs: tuple[np.ndarray, ...],
        priors: np.ndarray,
        values: np.ndarray,
        expand: bool,
        descend: bool,
    ) -> int:
        kern = self.kernels
        b = _puct_round(
            self._fns, roots, kern.params, seats, root_node, live, stream, self.c_puct, value_all, expand, descend,
            self.tree.arrays(), paths, leaves, priors, values, outs,
        )  # fmt: skip
        _check_code(int(b), f"{self.rules.info.game_id} puct")
        return int(b)

    def _evaluate(
        self, obs: np.ndarray, masks: np.ndarray, movers: np.ndarray, b: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """The evaluator on the first ``b`` rows (views of the search's buffers, valid during the call)."""
        if b == 0:
            return np.zeros((0, masks.shape[1]), dtype=np.float64), np.zeros(0, dtype=np.float64)
        self.evaluations += b
        priors, values = self.evaluator(obs[:b], masks[:b], movers[:b])
        return (
            np.ascontiguousarray(priors, dtype=np.float64).reshape(b, masks.shape[1]),
            np.ascontiguousarray(values, dtype=np.float64).reshape(b),
        )

    def _noise(self, root_node: np.ndarray, live: np.ndarray) -> None:
        """Dirichlet noise on the priors of the searched roots, in root order (as ``PUCTSearch``)."""
        tree = self.tree
        for r in np.flatnonzero(live).tolist():
            node = int(root_node[r])
            e0, n = int(tree.nodes[node, _EDGE0]), int(tree.nodes[node, _NEDGES])
            noise = self.rng.dirichlet(np.full(n, self.dirichlet_alpha))
            prior = tree.stats[e0 : e0 + n, _PRIOR]
            tree.stats[e0 : e0 + n, _PRIOR] = (1 - self.dirichlet_fraction) * prior + self.dirichlet_fraction * noise

    def _result(self, node: int) -> SearchResult:
        actions, visits, vsum, prior = self.tree.children(node)
        return SearchResult.of(actions.tolist(), visits, vsum, float(self.tree.node_value[node]), prior)


__all__ = [
    "ENGINES",
    "CompiledISMCTS",
    "CompiledPUCT",
    "RowPolicy",
    "Tree",
    "check_engine",
    "compiled_kernels",
    "greedy_row_policy",
    "make_puct",
    "obs_key",
    "policy_signature",
    "row_value",
    "value_signature",
]
