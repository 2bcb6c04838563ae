"""Policies trained elsewhere, as agents: a Stable-Baselines3 model, a torch module, an RLlib module, a callable.

Each adapter asks its policy for one score per action (logits, or Q-values for DQN), masks them with the legal
actions and plays the best legal action, or samples from the masked softmax with ``deterministic=False``;
``act_batch`` asks for a whole batch at once.

| command line | Python | needs |
| --- | --- | --- |
| ``sb3=PATH`` (``sb3=path=PATH,algo=DQN``) | ``from_sb3(model, game_id)`` | the ``train`` extra |
| ``torch=PATH`` (``torch.export`` or TorchScript) | ``from_torch(module, game_id)`` | torch |
| ``rllib=PATH`` (``rllib=path=PATH,module=ID``) | ``from_rllib(module, game_id)`` | the ``rllib`` extra |
| (a factory of your own: ``docs/your-agent.md``) | ``from_callable(fn, game_id)`` | nothing |

Loading any of these files runs code, so each needs ``trust=True`` (``--trust-checkpoint``).
"""

from __future__ import annotations

import contextlib
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.checkpoint import TRUST_HINT, resolve_path


class UntrustedFileError(ValueError):
    """A file whose loading would run code, without ``trust=True``."""


def _trusted(path: str | Path, what: str, trust: bool, folder: bool = False) -> Path:
    """``path`` (a file, or with ``folder`` a folder) if it exists and ``trust``; else the error that says why not."""
    p = Path(path).expanduser() if folder else resolve_path(path)
    if folder and not p.is_dir():
        raise FileNotFoundError(f"no checkpoint folder at {str(p)!r} (give the folder an RLlib save wrote)")
    if not trust:
        raise UntrustedFileError(f"{str(p)!r}: loading {what} runs code stored in the file; {TRUST_HINT}")
    return p


class ScoresAgent(BaseAgent):
    """An agent that plays the best legal action by its ``scores`` of a batch of observations (one per action)."""

    name = "scores"

    def __init__(
        self,
        game_id: str,
        deterministic: bool = True,
        seed: int | None = None,
        where: str = "the policy",
        **game_options: Any,
    ) -> None:
        super().__init__(game_id, seed=seed, **game_options)
        from jericho_env.registry import make_rules

        info = make_rules(game_id, **game_options).info
        self.observation_size, self.num_actions = info.observation_size, info.num_actions
        self.deterministic = bool(deterministic)
        self.where = where

    def scores(self, observations: np.ndarray) -> Any:  # pragma: no cover - abstract
        """One score per action for each row of ``observations``: an array or tensor ``(B, A)``."""
        raise NotImplementedError

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The best legal action by the policy's scores (or one sampled from their masked softmax)."""
        self.check_observation(observation)
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        return int(self.act_batch(obs, np.asarray(observation["action_mask"], dtype=bool)[None])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """One legal action per row: the policy asked once for the whole batch."""
        masks = np.asarray(masks, dtype=bool)
        if not masks.any(axis=1).all():
            raise ValueError(f"{self.name}: a row of the action mask has no legal action (is it this agent's turn?)")
        raw = self.scores(np.asarray(observations, dtype=np.float32))
        scores = np.array(raw.detach().cpu().numpy() if hasattr(raw, "detach") else raw, dtype=np.float64)
        if scores.shape != masks.shape:
            raise ValueError(
                f"{self.name}: {self.where} gave scores of shape {scores.shape} for observations of shape "
                f"{np.shape(observations)}; it must give one score per action, {masks.shape} (was it trained on "
                f"{self.game_id} with these options, {self.game_options or 'the defaults'}?)"
            )
        scores[~masks] = -np.inf
        if self.deterministic:
            return np.argmax(scores, axis=1)
        p = np.exp(scores - scores.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        u = self.rng.random((len(p), 1))
        return np.minimum((p.cumsum(axis=1) < u).sum(axis=1), masks.shape[1] - 1)

    def _check_input_size(self, size: int | None) -> None:
        if size is not None and size != self.observation_size:
            raise ValueError(
                f"{self.name}: {self.where} reads observations of size {size}, but {self.game_id} with options "
                f"{self.game_options or '{}'} gives {self.observation_size}: was it trained on another game or options?"
            )


# ----------------------------------------------------------------------------------------------- Stable-Baselines3
SB3_ALGOS = ("auto", "MaskablePPO", "PPO", "A2C", "DQN")
# the module of a zip's policy class (read from its JSON, nothing unpickled) -> the algorithm that loads it
_SB3_BY_POLICY = {
    "sb3_contrib.common.maskable.policies": "MaskablePPO",
    "stable_baselines3.dqn.policies": "DQN",
    "stable_baselines3.common.policies": "PPO",
}


def sb3_algorithm(path: Path) -> str:
    """The algorithm class that saved the SB3 zip ``path``, read from its JSON part (nothing unpickled)."""
    try:
        with zipfile.ZipFile(path) as z:
            data = json.loads(z.read("data"))
        module = data["policy_class"]["__module__"]
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, TypeError) as e:
        raise ValueError(f"{str(path)!r} is not a Stable-Baselines3 zip ({type(e).__name__}: {e})") from None
    if module not in _SB3_BY_POLICY:
        raise ValueError(
            f"{str(path)!r}: a policy of {module} is not known here; say which with algo= ({', '.join(SB3_ALGOS[1:])})"
        )
    return _SB3_BY_POLICY[module]


class SB3Agent(ScoresAgent):
    """A Stable-Baselines3 or sb3-contrib model (MaskablePPO, PPO, A2C, DQN) as an agent (``sb3=PATH``)."""

    name = "sb3"

    def __init__(
        self,
        game_id: str,
        path: str | Path | None = None,
        model: Any = None,
        algo: str = "auto",
        trust: bool = False,
        deterministic: bool = True,
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        if algo not in SB3_ALGOS:
            raise ValueError(f"sb3: algo must be one of {', '.join(SB3_ALGOS)}, got {algo!r}")
        if (path is None) == (model is None):
            raise ValueError("sb3: give path= (a saved zip) or model= (a model in memory), one of them")
        where = "the model"
        if path is not None:
            p = _trusted(path, "a Stable-Baselines3 zip", trust)
            model = _load_sb3(p, sb3_algorithm(p) if algo == "auto" else algo)
            where = f"the model {p.name}"
        super().__init__(game_id, deterministic=deterministic, seed=seed, where=where, **game_options)
        self.policy = getattr(model, "policy", model)
        self.policy.set_training_mode(False)
        shape = getattr(self.policy.observation_space, "shape", None)
        self._check_input_size(int(np.prod(shape)) if shape else None)

    def scores(self, observations: np.ndarray) -> Any:
        """The policy's logits (actor-critic policies) or Q-values (DQN) for the batch."""
        import torch

        policy = self.policy
        with torch.no_grad():
            obs = policy.obs_to_tensor(observations)[0]
            if hasattr(policy, "q_net"):
                return policy.q_net(obs)
            return policy.get_distribution(obs).distribution.logits


def _load_sb3(path: Path, algo: str) -> Any:
    import importlib

    try:
        library = importlib.import_module("sb3_contrib" if algo == "MaskablePPO" else "stable_baselines3")
        algorithm = getattr(library, algo)
    except ImportError as e:
        raise ImportError("the sb3 agent needs the train extra: pip install -e '.[train]'") from e
    try:
        return algorithm.load(str(path), device="cpu")
    except Exception as e:  # SB3 raises many kinds on a damaged or mismatched archive
        raise ValueError(f"could not load {str(path)!r} as {algo}: {type(e).__name__}: {e}") from None


def from_sb3(model: Any, game_id: str, deterministic: bool = True, seed: int | None = None, **options: Any) -> SB3Agent:
    """A Stable-Baselines3 / sb3-contrib model in memory (or its ``.policy``) as an agent for ``game_id``."""
    return SB3Agent(game_id, model=model, deterministic=deterministic, seed=seed, **options)


# ----------------------------------------------------------------------------------------------- torch
class TorchAgent(ScoresAgent):
    """A torch module mapping observations ``(B, D)`` to logits ``(B, A)``, or a saved one (``torch=PATH``).

    A file is a ``torch.export`` program (exported with a dynamic batch dimension) or a TorchScript file.
    """

    name = "torch"

    def __init__(
        self,
        game_id: str,
        path: str | Path | None = None,
        module: Any = None,
        trust: bool = False,
        deterministic: bool = True,
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        import torch

        if (path is None) == (module is None):
            raise ValueError("torch: give path= (a saved module) or module= (a module in memory), one of them")
        where = "the module"
        if path is not None:
            p = _trusted(path, "a torch.export or TorchScript file", trust)
            module = _load_torch(torch, p)
            where = f"the module {p.name}"
        super().__init__(game_id, deterministic=deterministic, seed=seed, where=where, **game_options)
        self.module = module
        # dropout, batch norm: inference mode (a plain callable and a torch.export program have no modes)
        with contextlib.suppress(AttributeError, NotImplementedError):
            module.eval()
        self._torch = torch

    def scores(self, observations: np.ndarray) -> Any:
        """The module's output for the batch."""
        torch = self._torch
        with torch.no_grad():
            try:
                return self.module(torch.as_tensor(observations))
            except RuntimeError as e:  # most often a shape mismatch: name the sizes
                raise ValueError(
                    f"{self.name}: {self.where} failed on observations of shape {observations.shape} "
                    f"({' '.join(str(e).split())[:200]}): was it trained on {self.game_id} with these options?"
                ) from None


def _load_torch(torch: Any, path: Path) -> Any:
    """The module saved at ``path``: a ``torch.export`` program, else a TorchScript file."""
    import warnings

    errors = []
    if not zipfile.is_zipfile(path):  # both formats are zip archives
        errors.append("not a zip archive")
    else:
        try:
            return torch.export.load(str(path)).module()
        except Exception as e:
            errors.append(f"torch.export: {type(e).__name__}")
        try:
            with warnings.catch_warnings():  # torch deprecates TorchScript; such files still load (docstring)
                warnings.simplefilter("ignore", DeprecationWarning)
                return torch.jit.load(str(path), map_location="cpu")
        except Exception as e:
            errors.append(f"TorchScript: {type(e).__name__}: {' '.join(str(e).split())[:120]}")
    raise ValueError(
        f"{str(path)!r} is neither a torch.export program nor a TorchScript file ({'; '.join(errors)}): save one "
        "with torch.export.save(torch.export.export(module, (x,), dynamic_shapes=({0: torch.export.Dim.DYNAMIC},)), "
        "path)"
    )


def from_torch(
    module: Any, game_id: str, deterministic: bool = True, seed: int | None = None, **options: Any
) -> TorchAgent:
    """A torch module (observations ``(B, D)`` float32 -> logits ``(B, A)``) as an agent for ``game_id``."""
    return TorchAgent(game_id, module=module, deterministic=deterministic, seed=seed, **options)


# ----------------------------------------------------------------------------------------------- RLlib
class RLlibAgent(ScoresAgent):
    """An RLlib (new API stack) ``RLModule`` as an agent: its ``action_dist_inputs`` are the logits (``rllib=PATH``).

    ``path``: an RLModule checkpoint, or an algorithm's holding one module (or the one named ``module``). A module
    observing ``{"observations", "action_mask"}`` (``jericho_env.wrappers.rllib``) is handed both.
    """

    name = "rllib"

    def __init__(
        self,
        game_id: str,
        path: str | Path | None = None,
        rl_module: Any = None,
        module: str | None = None,
        trust: bool = False,
        deterministic: bool = True,
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        if (path is None) == (rl_module is None):
            raise ValueError("rllib: give path= (a checkpoint) or rl_module= (a module in memory), one of them")
        where = "the RLModule"
        if path is not None:
            p = _trusted(path, "an RLlib checkpoint", trust, folder=True)
            rl_module = _load_rl_module(p, module)
            where = f"the RLModule of {p.name}"
        super().__init__(game_id, deterministic=deterministic, seed=seed, where=where, **game_options)
        import torch

        self._torch = torch
        self.rl_module = rl_module
        spaces = getattr(getattr(rl_module, "observation_space", None), "spaces", None) or {}
        self._masked_input = "observations" in spaces

    def scores(self, observations: np.ndarray) -> Any:
        """The module's ``action_dist_inputs`` for the batch."""
        torch = self._torch
        obs: Any = torch.as_tensor(observations)
        if self._masked_input:  # the masking module masks again with all-ones: the package masks after it
            obs = {"observations": obs, "action_mask": torch.ones((len(observations), self.num_actions))}
        with torch.no_grad():
            return self.rl_module.forward_inference({"obs": obs})["action_dist_inputs"]


def _load_rl_module(path: Path, module: str | None) -> Any:
    try:
        from ray.rllib.core.rl_module.rl_module import RLModule
    except ImportError as e:
        raise ImportError("the rllib agent needs the rllib extra: pip install -e '.[rllib]'") from e
    root = path / "learner_group" / "learner" / "rl_module"
    if root.is_dir():  # an algorithm's checkpoint: pick its module
        found = sorted(d.name for d in root.iterdir() if d.is_dir())
        if module is None and len(found) == 1:
            module = found[0]
        if module not in found:
            raise ValueError(
                f"{str(path)!r} holds the modules {', '.join(found) or 'none'}: name one with module= "
                "(rllib=path=PATH,module=ID)"
            )
        path = root / module
    try:
        return RLModule.from_checkpoint(str(path))
    except Exception as e:
        raise ValueError(f"could not load an RLModule from {str(path)!r}: {type(e).__name__}: {e}") from None


def from_rllib(
    rl_module: Any, game_id: str, deterministic: bool = True, seed: int | None = None, **options: Any
) -> RLlibAgent:
    """An RLlib ``RLModule`` in memory as an agent for ``game_id``."""
    return RLlibAgent(game_id, rl_module=rl_module, deterministic=deterministic, seed=seed, **options)


# ----------------------------------------------------------------------------------------------- a callable
class CallableAgent(BaseAgent):
    """A plain function as an agent: ``fn(observation_dict) -> action``, or ``-> scores`` over the actions.

    With ``returns="action"`` the answer is played as given; with ``returns="scores"`` the best legal action is.
    """

    name = "callable"

    def __init__(
        self,
        game_id: str,
        fn: Callable[..., Any],
        returns: str = "action",
        seed: int | None = None,
        **game_options: Any,
    ) -> None:
        if returns not in ("action", "scores"):
            raise ValueError(f"callable: returns must be 'action' or 'scores', got {returns!r}")
        if not callable(fn):
            raise TypeError(f"callable: fn must be callable, got {type(fn).__name__}")
        super().__init__(game_id, seed=seed, **game_options)
        self.fn, self.returns = fn, returns
        self.name = getattr(fn, "__name__", "callable")

    def act(self, observation: dict[str, np.ndarray]) -> int:
        """The function's action, or the best legal action by its scores."""
        answer = self.fn(observation)
        if self.returns == "action":
            return answer  # type: ignore[no-any-return]
        scores = np.array(answer, dtype=np.float64).reshape(-1)
        mask = np.asarray(observation["action_mask"], dtype=bool)
        if scores.shape != mask.shape:
            raise ValueError(f"{self.name}: gave {scores.shape[0]} scores for {mask.shape[0]} actions")
        scores[~mask] = -np.inf
        return int(np.argmax(scores))


def from_callable(fn: Callable[..., Any], game_id: str, returns: str = "action", **options: Any) -> CallableAgent:
    """A function of the observation dict (an action, or with ``returns="scores"`` one score per action) as an agent."""
    return CallableAgent(game_id, fn, returns=returns, **options)


__all__ = [
    "CallableAgent",
    "RLlibAgent",
    "SB3Agent",
    "ScoresAgent",
    "TorchAgent",
    "UntrustedFileError",
    "from_callable",
    "from_rllib",
    "from_sb3",
    "from_torch",
]
