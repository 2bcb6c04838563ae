"""``dmc``: a Deep Monte-Carlo action-value network (``experiments.dmc``) playing its highest-valued legal action.

The network is ``agents.nets.dmc``'s (grid's: ``agents.nets.dmc_grid``); ties go to the lowest id, and
``batch_policy()`` plays a batch in one numpy pass. Checkpoints are a zip of ``meta.json`` (``"format": "jericho-env
dmc checkpoint"``, checked before anything is built) and tensors-only ``weights.pt`` (read as ``agents.checkpoint``
does). Without ``path`` the zoo's ``dmc`` network plays; ``dmc=A.zip+B.zip`` plays an ensemble's mean Q.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent

FORMAT = "jericho-env dmc checkpoint"
FORMAT_VERSION = 1
META = "meta.json"


def network_spec(
    game_id: str, options: Mapping[str, Any], hidden: Any, features: Any = "game", prior: Any = "none"
) -> Any:
    """The ``QSpec`` of ``game_id``'s network (``hidden``: sizes or ``"512,512"``, within ``agents.nets``' bounds;
    ``features``: game or none; ``prior``: none, or greedy-scores where the game has scores); ``ValueError``."""
    from agents.nets.dmc import ACTION_FEATURE_KINDS, PAIR_GAMES, PRIOR_KINDS, QSpec, parse_hidden
    from agents.prior import SCORE_GAMES
    from jericho_env.registry import make_rules

    if features not in ACTION_FEATURE_KINDS or prior not in PRIOR_KINDS:
        raise ValueError(f"features must be one of {ACTION_FEATURE_KINDS} and prior of {PRIOR_KINDS}")
    if prior != "none" and game_id not in SCORE_GAMES:
        raise ValueError(f"prior {prior!r} is for {', '.join(SCORE_GAMES)} only, not {game_id!r}")
    info, pairs = make_rules(game_id, **dict(options)).info, game_id in PAIR_GAMES  # grid: agents.nets.dmc_grid
    features, kind = ("game", "pairs") if pairs else (features, "ids")
    return QSpec(info.observation_size, parse_hidden(hidden), info.num_actions, features, kind, prior)


def build_network(
    game_id: str, options: Mapping[str, Any], hidden: Any, features: str = "game", prior: str = "none"
) -> Any:
    """A fresh network for ``game_id`` (``network_spec``'s arguments)."""
    from agents.nets.dmc import QNetwork, action_features
    from agents.prior import make_prior

    spec = network_spec(game_id, options, hidden, features, prior)
    scorer = make_prior(prior, game_id, **dict(options))  # greedy's scores, for a network on the prior
    if spec.kind == "pairs":
        from agents.nets.dmc_grid import GridQNetwork

        return GridQNetwork(spec, options, scorer)
    table = action_features(game_id, options) if features == "game" else np.zeros((spec.num_actions, 0), np.float32)
    return QNetwork(spec, table, scorer)


def save_dmc(
    path: str | Path, network: Any, game_id: str, options: Mapping[str, Any], training: Mapping[str, Any],
    optimizer: Any = None,
) -> Path:  # fmt: skip
    """Write the network (and the optimizer's state) to ``path`` (``agents.checkpoint.write_zip``), with its meta:
    format, game, versions, resolved options, the network's spec, ``training``."""
    from agents.checkpoint import write_zip
    from jericho_env.registry import make_rules

    rules = make_rules(game_id, **dict(options))
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "game_id": game_id, "game_version": rules.version,
            "observation_version": rules.observation_version, "options": dict(rules.options),
            "network": network.spec.to_json(), "training": dict(training)}  # fmt: skip
    return write_zip(path, meta, network.state_dict(), optimizer)


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
    """The network meta.json describes: the game's, with layers within the bounds of ``agents.nets``."""
    from agents.checkpoint import CheckpointError
    from jericho_env.core.rules import JerichoError

    net = meta["network"]
    try:
        hidden = net["hidden"]
        if not isinstance(hidden, list) or not all(type(x) is int for x in hidden):
            raise ValueError(f"hidden must be a list of ints, got {hidden!r}")
        spec = network_spec(meta["game_id"], meta["options"], hidden, net.get("features"), net.get("prior", "none"))
    except (JerichoError, TypeError) as e:
        raise CheckpointError(f"{where}: {META} names a game this version cannot make: {e}") from None
    except (KeyError, ValueError) as e:
        raise CheckpointError(f"{where}: {META}'s network is refused: {e}") from None
    if {"kind": "ids", "prior": "none", **net} != spec.to_json():
        raise CheckpointError(f"{where}: {META}'s network must be {spec.to_json()} for its game, got {net!r}")


def load_dmc(
    path: str | Path, game_id: str | None = None, options: Mapping[str, Any] | None = None
) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    """(network in eval mode, meta, optimizer state or None) of a dmc checkpoint, never unpickled; with ``game_id``,
    one of that game, ``options`` and observation version (``agents.checkpoint.check_game``)."""
    from agents.checkpoint import CheckpointError, _weights, check_game, resolve_path, weights_limit

    p = resolve_path(path)
    meta = read_dmc_meta(p)
    if game_id is not None:
        check_game(meta, game_id, options or {}, f"checkpoint {str(p)!r}")
    net = meta["network"]
    network = build_network(meta["game_id"], meta["options"], net["hidden"], net["features"], net.get("prior", "none"))
    state = _weights(p, weights_limit(network))
    try:
        network.load_state_dict(state["policy"])
    except (RuntimeError, KeyError, ValueError) as e:
        raise CheckpointError(f"{str(p)!r}: its tensors do not fit the network meta.json describes: {e}") from None
    network.eval()
    return network, meta, state.get("optimizer")


MAX_ENSEMBLE = 16  # networks in one ``dmc=A.zip+B.zip`` ensemble at most


def checkpoint_paths(path: str | Path | Sequence[str | Path]) -> list[Path]:
    """The checkpoints of ``path``: one file (even with a ``+`` in its name), a sequence, or ``"A.zip+B.zip"``."""
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
    """``dmc``: the legal action of highest Q under a Deep Monte-Carlo network, or of highest mean Q under several
    (``path`` a sequence or ``"A.zip+B.zip"``: ``agents.nets.dmc.MeanQPlan``, each network checked as one alone)."""

    name = "dmc"

    def __init__(self, game_id: str, path: str | Path | Sequence[str | Path] | None = None, network: Any = None,
                 seed: int | None = None, **game_options: Any) -> None:  # fmt: skip
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
                from agents.pretrained import check_sha, shipped

                entry = shipped(self.name, game_id, game_options)
                check_sha(entry)
                where = entry.path
            self.network, self.meta, _ = load_dmc(where, game_id, game_options)
            self.path = str(where)
        self.observation_size = make_rules(game_id, **game_options).info.observation_size
        if self.network.spec.observation_size != self.observation_size:
            raise ValueError(f"dmc network reads {self.network.spec.observation_size} floats; {game_id} with options "
                             f"{game_options or '{}'} gives {self.observation_size}")  # fmt: skip
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
        self.plan, self.name = plan, name

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = np.asarray(masks, dtype=bool)
        if not masks.any(axis=1).all():
            raise ValueError(f"{self.name}: a row has no legal action")
        return np.asarray(self.plan.best(observations, masks), dtype=np.int64)


DEFAULT_PRIOR_TEMPERATURE = 0.1  # dmc-search's prior: softmax(Q / this) over the legal actions


def legal_q(plan: Any, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Q of every legal action (B, A) float32, -inf elsewhere, under a plan (one network's or an ensemble's mean)."""
    masks = np.asarray(masks, dtype=bool)
    return np.where(masks, plan.q_all(obs, masks), np.float32(-np.inf)).astype(np.float32)


class QEvaluator:
    """A dmc plan as ``agents.search.puct``'s evaluator: prior ``softmax(Q / temperature)``, value the highest Q;
    every row a mover's (``value_rows="mover"``: a Q network values the seat to move only)."""

    def __init__(self, plan: Any, temperature: float = DEFAULT_PRIOR_TEMPERATURE) -> None:
        self.plan = plan
        self.temperature = float(temperature)
        self.rows = 0  # rows evaluated (profiling)

    def best_moves(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The legal action of highest Q per row (the rollouts' moves, ``agents.search.rollout_search``)."""
        return np.asarray(self.plan.best(np.asarray(observations, np.float32), np.asarray(masks, bool)), np.int64)

    def __call__(self, observations: np.ndarray, masks: np.ndarray, movers: np.ndarray) -> tuple[np.ndarray, ...]:
        if not np.all(movers):
            raise ValueError("QEvaluator values the seat to move only (value_rows='mover')")
        self.rows += len(observations)
        q = legal_q(self.plan, np.asarray(observations, np.float32), masks)
        values = q.max(axis=1)
        z = np.exp((q - values[:, None]) / self.temperature)  # exp(-inf) = 0 off the legal actions
        priors = z / z.sum(axis=1, keepdims=True)
        return priors.astype(np.float32), values.astype(np.float32)
