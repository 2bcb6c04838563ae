"""``dmc``: a Deep Monte-Carlo action-value network (``experiments.dmc``) playing its highest-valued legal action.

The network is ``agents.nets.dmc.QNetwork``: Q(s, a) for every action id in one forward pass, from the
observation of the seat to move. The agent plays the legal action of highest Q (ties: the lowest id);
``batch_policy()`` hands the tournament's batched loop a numpy snapshot that scores a whole batch at once.

Checkpoints are a zip of ``meta.json`` and tensors-only ``weights.pt``, as ``agents.checkpoint``'s (written
to a temporary file, flushed and renamed; read with ``torch.load(weights_only=True)``, never unpickled,
size-limited and checked for nan/inf by ``agents.checkpoint._weights``). ``meta.json`` says
``"format": "jericho-env dmc checkpoint"`` and records the game, its versions and resolved options, the
network (``QSpec``: sizes within ``agents.nets.MAX_WIDTH`` / ``MAX_LAYERS``, checked before anything is
built) and the training counters. Without ``path``, the zoo's ``dmc`` entry for the game is played
(``agents.pretrained``). ``dmc=A.zip+B.zip+C.zip`` plays an ensemble: the legal action of highest mean Q
over the networks.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent

FORMAT = "jericho-env dmc checkpoint"
FORMAT_VERSION = 1
META = "meta.json"
WEIGHTS = "weights.pt"


def build_network(
    game_id: str, options: Mapping[str, Any], hidden: Any, features: str = "game", prior: str = "none"
) -> Any:
    """A fresh ``QNetwork`` for ``game_id`` under ``options`` (``hidden``: sizes or ``"512,512"``).

    ``prior``: ``"greedy-scores"`` gives the network greedy's score of every action (grid and walls;
    ``agents.nets.dmc``), ``"none"`` not.
    """
    from agents.nets.dmc import QNetwork, QSpec, action_features, make_hinter, parse_hidden
    from jericho_env.registry import make_rules

    info = make_rules(game_id, **dict(options)).info
    hinter = make_hinter(prior, game_id, options)
    if game_id == "grid":  # a compact state and per-action features (agents.nets.dmc_grid)
        from agents.nets.dmc_grid import GridQNetwork

        spec = QSpec(info.observation_size, parse_hidden(hidden), info.num_actions, "game", "pairs", prior)
        return GridQNetwork(spec, options, hinter)
    spec = QSpec(info.observation_size, parse_hidden(hidden), info.num_actions, features, "ids", prior)
    table = action_features(game_id, options) if features == "game" else np.zeros((info.num_actions, 0), np.float32)
    return QNetwork(spec, table, hinter)


def meta_json(network: Any, game_id: str, options: Mapping[str, Any], training: Mapping[str, Any]) -> dict[str, Any]:
    """The ``meta.json`` of ``network``: format, game, versions, resolved options, network spec, training."""
    from jericho_env.registry import make_rules

    rules = make_rules(game_id, **dict(options))
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game_id": game_id,
        "game_version": rules.version,
        "observation_version": rules.observation_version,
        "options": dict(rules.options),
        "network": network.spec.to_json(),
        "training": dict(training),
    }


def save_dmc(
    path: str | Path,
    network: Any,
    game_id: str,
    options: Mapping[str, Any],
    training: Mapping[str, Any],
    optimizer: Any = None,
) -> Path:
    """Write the network (and the optimizer's state) and its meta to ``path`` through a temporary file and a rename."""
    import torch

    state: dict[str, Any] = {"policy": network.state_dict()}
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    weights = io.BytesIO()
    torch.save(state, weights)
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        with zipfile.ZipFile(f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr(META, json.dumps(meta_json(network, game_id, options, training), indent=1))
            zf.writestr(WEIGHTS, weights.getvalue())
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def read_dmc_meta(path: str | Path) -> dict[str, Any]:
    """The checked ``meta.json`` of a dmc checkpoint; ``CheckpointError`` naming what is wrong."""
    from agents.checkpoint import CheckpointError, resolve_path

    p = resolve_path(path)
    try:
        with zipfile.ZipFile(p) as zf:
            meta = json.loads(zf.read(META).decode("utf-8"))
    except KeyError:
        raise CheckpointError(f"{str(p)!r} is not a dmc checkpoint: no {META}") from None
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{str(p)!r} is not a readable dmc checkpoint ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        got = meta.get("format") if isinstance(meta, dict) else None
        raise CheckpointError(f"{str(p)!r} is not a {FORMAT} (its meta.json says {got!r}; a PPO checkpoint?)")
    version = meta.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(f"{str(p)!r} is in format version {version!r}; this version reads up to {FORMAT_VERSION}")
    missing = [k for k in ("game_id", "options", "network", "observation_version", "game_version") if k not in meta]
    if missing or not isinstance(meta["options"], dict) or not isinstance(meta["network"], dict):
        raise CheckpointError(f"{str(p)!r}: {META} lacks or mangles {', '.join(missing) or 'options/network'}")
    _check_network(meta, str(p))
    return meta


def _check_network(meta: Mapping[str, Any], where: str) -> None:
    """The network meta.json describes: the game's sizes, layers within the bounds of ``agents.nets``."""
    from agents.checkpoint import CheckpointError
    from agents.nets.dmc import ACTION_FEATURE_KINDS, NETWORK_KINDS, PRIOR_KINDS, parse_hidden
    from agents.prior import SCORE_GAMES
    from jericho_env.core.rules import JerichoError
    from jericho_env.registry import make_rules

    net = meta["network"]
    try:
        info = make_rules(meta["game_id"], **meta["options"]).info
    except (JerichoError, TypeError) as e:
        raise CheckpointError(f"{where}: {META} names a game this version cannot make: {e}") from None
    try:
        hidden = net["hidden"]
        if not isinstance(hidden, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in hidden):
            raise ValueError(f"hidden must be a list of ints, got {hidden!r}")
        parse_hidden(hidden)
    except (KeyError, ValueError) as e:
        raise CheckpointError(f"{where}: {META}'s network is refused: {e}") from None
    sizes = (net.get("observation_size"), net.get("num_actions"))
    kinds_ok = net.get("features") in ACTION_FEATURE_KINDS and net.get("kind", "ids") in NETWORK_KINDS
    prior = net.get("prior", "none")
    if prior not in PRIOR_KINDS or (prior != "none" and meta["game_id"] not in SCORE_GAMES):
        raise CheckpointError(f"{where}: {META}'s network names prior {prior!r}, not one of {PRIOR_KINDS} for its game")
    if sizes != (info.observation_size, info.num_actions) or not kinds_ok:
        raise CheckpointError(
            f"{where}: {META}'s network must read {info.observation_size} floats and score {info.num_actions} "
            f"actions ({meta['game_id']} under its options) with features in {ACTION_FEATURE_KINDS}, got {net!r}"
        )


def load_dmc(
    path: str | Path, game_id: str | None = None, options: Mapping[str, Any] | None = None
) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    """(network in eval mode, meta, optimizer state or None) of a dmc checkpoint, never unpickled.

    With ``game_id``, the checkpoint must be for that game, ``options`` and observation version
    (``agents.checkpoint.check_game``).
    """
    from agents.checkpoint import CheckpointError, _weights, check_game, resolve_path, weights_limit

    p = resolve_path(path)
    meta = read_dmc_meta(p)
    if game_id is not None:
        check_game(meta, game_id, options or {}, f"checkpoint {str(p)!r}")
    net = meta["network"]
    network = build_network(meta["game_id"], meta["options"], net["hidden"], net["features"], net.get("prior", "none"))
    if network.spec.kind != net.get("kind", "ids"):
        raise CheckpointError(f"{str(p)!r}: its network kind {net.get('kind')!r} is not {meta['game_id']}'s")
    state = _weights(p, weights_limit(network))
    try:
        network.load_state_dict(state["policy"])
    except (RuntimeError, KeyError, ValueError) as e:
        raise CheckpointError(f"{str(p)!r}: its tensors do not fit the network meta.json describes: {e}") from None
    network.eval()
    return network, meta, state.get("optimizer")


MAX_ENSEMBLE = 16  # networks in one ``dmc=A.zip+B.zip`` ensemble at most


def checkpoint_paths(path: str | Path | Sequence[str | Path]) -> list[Path]:
    """The checkpoints of ``path``: one file, a sequence of them, or ``"A.zip+B.zip"`` (an ensemble).

    A string that names an existing file is that file, even with a ``+`` in its name.
    """
    if isinstance(path, (str, Path)):
        parts = [path] if Path(path).is_file() or "+" not in str(path) else str(path).split("+")
    else:
        parts = list(path)
    if not parts or any(not str(p).strip() for p in parts):
        raise ValueError(f"dmc: {str(path)!r} names an empty checkpoint path; give PATH or PATH+PATH+...")
    if len(parts) > MAX_ENSEMBLE:
        raise ValueError(f"dmc: an ensemble of {len(parts)} networks; at most {MAX_ENSEMBLE}")
    return [Path(p) for p in parts]


class DmcAgent(BaseAgent):
    """``dmc``: the legal action of highest Q under a Deep Monte-Carlo network, or of highest mean Q under several.

    ``path`` is one checkpoint, or several (a sequence, or ``"A.zip+B.zip+C.zip"``): an ensemble that plays
    the legal action of highest mean Q (``agents.nets.dmc.MeanQPlan``), each network checked against the
    game as one alone is.
    """

    name = "dmc"

    def __init__(
        self,
        game_id: str,
        path: str | Path | Sequence[str | Path] | None = None,
        network: Any = None,
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        super().__init__(game_id, seed=seed, **game_options)
        from jericho_env.registry import make_rules

        self.meta: dict[str, Any] = {}
        self.path: str | None = None
        self.plan: Any = None
        self.network: Any = network
        paths = [] if path is None or network is not None else checkpoint_paths(path)
        if len(paths) > 1:  # an ensemble: each network checked as one alone
            from agents.nets.dmc import MeanQPlan

            members = [DmcAgent(game_id, path=p, seed=seed, **game_options) for p in paths]
            self.meta, self.network = members[0].meta, members[0].network
            self.observation_size = members[0].observation_size
            self.path = "+".join(str(p) for p in paths)
            self.plan = MeanQPlan([m.plan for m in members])
            return
        if self.network is None:
            where = paths[0] if paths else None
            if where is None:  # the zoo's network for the game (agents.pretrained)
                from agents.pretrained import ZooError, sha256, shipped

                entry = shipped(self.name, game_id, game_options)
                if entry.card.get("file", {}).get("sha256") != sha256(entry.path):
                    raise ZooError(f"{str(entry.path)!r} does not match the SHA-256 on its card {entry.name}.json")
                where = entry.path
            self.network, self.meta, _ = load_dmc(where, game_id, game_options)
            self.path = str(where)
        self.observation_size = make_rules(game_id, **game_options).info.observation_size
        if self.network.spec.observation_size != self.observation_size:
            raise ValueError(
                f"dmc network reads {self.network.spec.observation_size} floats; {game_id} with options "
                f"{game_options or '{}'} gives {self.observation_size}"
            )
        self.plan = self.network.plan()

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The legal action of highest Q."""
        self.legal(observation)  # the size and a legal action checked
        obs = np.asarray(observation["observation"], np.float32)[None]
        return int(self.plan.best(obs, np.asarray(observation["action_mask"], bool)[None])[0])

    def batch_policy(self) -> DmcBatchPolicy:
        """The tournament's batch hook: the whole batch scored in one numpy pass."""
        return DmcBatchPolicy(self.plan, self.name)


class DmcBatchPolicy:
    """``(observations (B, D), masks (B, A)) -> actions (B,)``: the masked argmax of Q over a batch."""

    uses_observation = True
    uses_views = False

    def __init__(self, plan: Any, name: str = "dmc") -> None:
        self.plan = plan
        self.name = name

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks, dtype=bool)
        if not masks.any(axis=1).all():
            raise ValueError(f"{self.name}: a row has no legal action")
        return np.asarray(self.plan.best(observations, masks), dtype=np.int64)


DEFAULT_PRIOR_TEMPERATURE = 0.1  # dmc-search's prior: softmax(Q / this) over the legal actions


def legal_q(plan: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Q of every legal action (B, A) float32, -inf elsewhere, under a plan (one network's or an ensemble's mean)."""
    masks = np.asarray(masks, dtype=bool)
    q = np.full(masks.shape, -np.inf, dtype=np.float32)
    if getattr(plan, "pairs", False):  # an ensemble of grid's pair networks: the mean over its plans
        parts = [p.pair_values(obs, masks) for p in plan.plans]
        q[parts[0][0], parts[0][1]] = np.mean([v for _, _, v in parts], axis=0)
    elif hasattr(plan, "pair_values"):  # grid's pair network
        rows, acts, values = plan.pair_values(obs, masks)
        q[rows, acts] = values
    else:
        q[masks] = plan.q_all(obs, masks)[masks]
    return q


class QEvaluator:
    """A dmc plan as ``agents.search.puct``'s evaluator: prior ``softmax(Q / temperature)``, value the highest Q.

    Every row must be a mover's (``value_rows="mover"``: two-player zero-sum games): a Q network values the
    seat to move only.
    """

    def __init__(self, plan: Any, temperature: float = DEFAULT_PRIOR_TEMPERATURE) -> None:
        self.plan = plan
        self.temperature = float(temperature)
        self.rows = 0  # rows evaluated (profiling)

    def best_moves(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The legal action of highest Q per row (the rollouts' moves, ``agents.search.rollout_search``)."""
        return np.asarray(self.plan.best(np.asarray(observations, np.float32), np.asarray(masks, bool)), np.int64)

    def __call__(
        self, observations: np.ndarray, masks: np.ndarray, movers: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        if not np.all(movers):
            raise ValueError("QEvaluator values the seat to move only (value_rows='mover')")
        self.rows += len(observations)
        q = legal_q(self.plan, np.asarray(observations, np.float32), masks)
        values = q.max(axis=1)
        z = np.exp((q - values[:, None]) / self.temperature)  # exp(-inf) = 0 off the legal actions
        priors = z / z.sum(axis=1, keepdims=True)
        return priors.astype(np.float32), values.astype(np.float32)
