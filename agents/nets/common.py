"""Policy plumbing shared by every game: a shared first layer, a logits-first maskable policy, the prior bonus."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.distributions import MaskableCategorical, MaskableCategoricalDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.preprocessing import preprocess_obs
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.type_aliases import Schedule
from torch import nn


class SharedLinearExtractor(BaseFeaturesExtractor):
    """One linear layer + ReLU shared by the policy and the value heads (``net_arch`` then holds the per-head layers).

    Subclasses can append fixed features computed from the observation (``derived_features``).
    """

    def __init__(
        self, observation_space: gym.spaces.Box, features_dim: int = 256, input_size: int | None = None
    ) -> None:
        super().__init__(observation_space, features_dim)
        # input_size: read only the first floats (the game's observation, without the prior's floats)
        n_in = int(observation_space.shape[0]) if input_size is None else input_size
        self.derived = self.derived_features(n_in)
        extra = self.derived.size if self.derived is not None else 0
        self.net = torch.nn.Sequential(torch.nn.Linear(n_in + extra, features_dim), torch.nn.ReLU())

    def derived_features(self, observation_size: int) -> Any:
        """A fixed module whose output (``.size`` floats) joins the observation; None here, see ``WallsExtractor``."""
        return None

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        if self.derived is not None:
            observations = torch.cat([observations, self.derived(observations)], dim=1)
        return self.net(observations)


def sample_rows(probs: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row of ``probs`` (b, n) (rows sum to 1), drawn by inverting each row's cumulative sum.

    One uniform number per row (cheaper than ``torch.multinomial`` on CPU); an action of probability 0 is never drawn.
    """
    cdf = probs.cumsum(dim=1)
    total = cdf[:, -1:]
    below = torch.nextafter(total, total.new_zeros(()))
    u = torch.minimum(torch.rand(total.shape, generator=generator, dtype=cdf.dtype) * total, below)
    return torch.searchsorted(cdf, u, right=True).squeeze(1)


class MaskedCategorical(MaskableCategorical):
    """sb3-contrib's ``MaskableCategorical``, built with its masks in one normalisation and sampled by inverse CDF.

    The same distribution, cheaper where actions are many (grid has 2,206); never samples a masked action.
    """

    def __init__(self, logits: torch.Tensor, masks: Any = None) -> None:
        self.masks = None if masks is None else torch.as_tensor(masks, dtype=torch.bool).reshape(logits.shape)
        masked = logits if self.masks is None else logits.masked_fill(~self.masks, -1e8)
        torch.distributions.Categorical.__init__(self, logits=masked, validate_args=False)
        self._original_logits = logits

    def sample(self, sample_shape: torch.Size | list[int] | tuple[int, ...] = ()) -> torch.Tensor:
        if tuple(sample_shape) != ():
            return super().sample(sample_shape)
        with torch.no_grad():
            return sample_rows(self.probs.reshape(-1, self.probs.shape[-1])).reshape(self.probs.shape[:-1])


class _LogitsPolicy(MaskableActorCriticPolicy):
    """A maskable actor-critic whose subclasses compute logits and values in one ``_run(obs)``.

    Implements SB3's ``forward``, ``evaluate_actions``, ``get_distribution`` and ``predict_values`` on it, with the
    prior bonus (``agents.prior``): ``prior_weight`` (trained) times the prior's one-hot move or, with
    ``"greedy-scores"``, its scores, added to the logits.
    """

    prior: str | None
    prior_init: float
    rows_independent = True  # each row of a batch is computed alone (``agents.nets.stacked`` relies on it)

    def _init_prior(self, prior: str | None, prior_weight: float) -> None:
        self.prior = None if prior in (None, "none") else prior
        self.prior_init = float(prior_weight)

    def _build_prior(self) -> None:
        """Create the prior weight (call in ``_build`` before the optimizer is made)."""
        if self.prior is not None:
            self.prior_weight = nn.Parameter(torch.tensor(self.prior_init))

    def _prior_parameters(self) -> dict[str, Any]:
        return {"prior": self.prior, "prior_weight": self.prior_init}

    def _prior_size(self, action_space: gym.spaces.Space) -> int:
        """Floats of the prior's floats at the end of the observation (``agents.prior.prior_size``)."""
        from agents.prior import prior_size

        assert isinstance(action_space, gym.spaces.Discrete)
        return prior_size(self.prior, int(action_space.n))

    def _split(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(the game's observation, the prior bonus per action or None)."""
        if self.prior is None:
            return obs, None
        from agents.prior import decode_prior

        assert isinstance(self.action_space, gym.spaces.Discrete)
        n = int(self.action_space.n)
        if self.prior == "greedy-scores":  # one score per action in [0, 1]
            return obs[:, :-n], obs[:, -n:] * self.prior_weight
        bonus = torch.nn.functional.one_hot(decode_prior(obs[:, -1], n), n).to(obs.dtype) * self.prior_weight
        return obs[:, :-1], bonus

    def _run(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # pragma: no cover - abstract
        raise NotImplementedError

    def preprocess(self, obs: Any) -> torch.Tensor:
        """Observations as a float tensor (SB3's preprocessing for a Box space)."""
        out = preprocess_obs(obs, self.observation_space, normalize_images=False)
        assert isinstance(out, torch.Tensor)
        return out.float()

    def action_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """Unmasked logits (batch, num_actions), prior bonus included."""
        return self._run_logits(self.preprocess(obs))

    def _run_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """``_run(obs)``'s logits; subclasses whose value head is separate skip it here."""
        return self._run(obs)[0]

    def _distribution(self, logits: torch.Tensor, action_masks: Any) -> Any:
        assert isinstance(self.action_dist, MaskableCategoricalDistribution)
        # a new wrapper per call: the policy keeps no tensors of a forward pass (a snapshot deep-copies it,
        # and torch cannot deep-copy tensors that are part of an autograd graph)
        distribution = MaskableCategoricalDistribution(self.action_dist.action_dim)
        distribution.distribution = MaskedCategorical(logits.view(-1, distribution.action_dim), action_masks)
        return distribution

    def _run_compact(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        """(logits of some actions (b, M), their action numbers (b, M), values), or None: see ``_compact``."""
        return None

    def _compact(
        self, obs: torch.Tensor, action_masks: Any
    ) -> tuple[MaskedCategorical, torch.Tensor, torch.Tensor] | None:
        """The masked distribution over a subset of the actions that holds every legal one, or None.

        A body computing logits for some actions only (``GridCellsNet.forward_compact``) is normalised over those: the
        same distribution, cheaper. Returns (the distribution over positions in the subset, their action numbers,
        values); None when there is no subset or a legal action lies outside it.
        """
        if action_masks is None:
            return None
        compact = self._run_compact(self.preprocess(obs))
        if compact is None:
            return None
        logits, actions, values = compact
        masks = torch.as_tensor(action_masks, dtype=torch.bool).reshape(logits.shape[0], -1)
        kept = masks.gather(1, actions)
        if not torch.equal(kept.sum(dim=1), masks.sum(dim=1)):
            return None
        return MaskedCategorical(logits, kept), actions, values

    def forward(
        self, obs: torch.Tensor, deterministic: bool = False, action_masks: np.ndarray | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Actions, values and log-probabilities (as SB3's ``forward``)."""
        compact = self._compact(obs, action_masks)
        if compact is not None:
            distribution, numbers, values = compact
            positions = distribution.mode if deterministic else distribution.sample()
            return numbers.gather(1, positions[:, None]).squeeze(1), values, distribution.log_prob(positions)
        logits, values = self._run(self.preprocess(obs))
        full = self._distribution(logits, action_masks)
        actions = full.get_actions(deterministic=deterministic)
        return actions, values, full.log_prob(actions)

    def evaluate_actions(
        self, obs: torch.Tensor, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities of ``actions`` and entropies (as SB3's ``evaluate_actions``)."""
        compact = self._compact(obs, action_masks)
        if compact is not None:
            distribution, numbers, values = compact
            positions = (numbers == actions.long().reshape(-1, 1)).int().argmax(dim=1)
            return values, distribution.log_prob(positions), distribution.entropy()
        logits, values = self._run(self.preprocess(obs))
        full = self._distribution(logits, action_masks)
        return values, full.log_prob(actions), full.entropy()

    def get_distribution(self, obs: Any, action_masks: np.ndarray | None = None) -> Any:
        """The masked action distribution."""
        return self._distribution(self.action_logits(obs), action_masks)

    def predict_values(self, obs: Any) -> torch.Tensor:
        """Value estimates (batch, 1)."""
        return self._run(self.preprocess(obs))[1]


class _BodyPolicy(_LogitsPolicy):
    """A grid ``_LogitsPolicy`` whose logits and values come from one module ``self.body`` (``_make_body``).

    A checkpoint saves ``net_kwargs``, ``game_id`` and ``game_options``, the arguments the body is built from.
    """

    body: nn.Module

    def __init__(
        self,
        observation_space: gym.spaces.Space,
        action_space: gym.spaces.Space,
        lr_schedule: Schedule,
        net_kwargs: dict[str, Any],
        prior: str | None,
        prior_weight: float,
        game_id: str,
        game_options: dict[str, Any] | None,
        **kwargs: Any,
    ) -> None:
        if game_id != "grid":
            raise ValueError(f"{type(self).__name__} plays grid only, not {game_id!r}")
        self.game_id, self.game_options, self.net_kwargs = game_id, game_options, net_kwargs
        self._init_prior(prior, prior_weight)
        kwargs.setdefault("net_arch", [])
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _make_body(self, size: int, num_actions: int) -> nn.Module:  # pragma: no cover - abstract
        """The body for observations of ``size`` floats (the prior's excluded) and ``num_actions`` actions."""
        raise NotImplementedError

    def _build(self, lr_schedule: Schedule) -> None:
        """Create the body and the optimizer (SB3's MLP extractor and heads are not used)."""
        obs_shape = self.observation_space.shape
        assert obs_shape is not None and isinstance(self.action_space, gym.spaces.Discrete)
        self.body = self._make_body(int(obs_shape[0]) - self._prior_size(self.action_space), int(self.action_space.n))
        self._build_prior()
        self.optimizer = self.optimizer_class(  # type: ignore[call-arg]  # SB3 passes lr to any optimizer class
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(self.net_kwargs)
        data.update(self._prior_parameters())
        data.update(game_id=self.game_id, game_options=self.game_options)
        return data

    def _run(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        game_obs, bonus = self._split(obs)
        logits, values = self.body(game_obs)
        return (logits if bonus is None else logits + bonus), values

    def _run_compact(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None:
        forward_compact = getattr(self.body, "forward_compact", None)
        if forward_compact is None:
            return None
        game_obs, bonus = self._split(obs)
        logits, actions, values = forward_compact(game_obs)
        return (logits if bonus is None else logits + bonus.gather(1, actions)), actions, values


class PriorMlpPolicy(_LogitsPolicy):
    """SB3's MLP actor-critic (features extractor, ``net_arch`` heads) plus the prior bonus of ``agents.prior``.

    The extractor and heads see the game's observation without the prior's floats float.
    """

    def __init__(
        self,
        observation_space: gym.spaces.Space,
        action_space: gym.spaces.Space,
        lr_schedule: Schedule,
        prior: str | None = "greedy",
        prior_weight: float = 5.0,
        **kwargs: Any,
    ) -> None:
        self._init_prior(prior, prior_weight)
        assert isinstance(observation_space, gym.spaces.Box) and observation_space.shape is not None
        n = observation_space.shape[0] - self._prior_size(action_space)
        # the extractor is built on the game's observation (SB3 builds it from the space it is given)
        kwargs.setdefault("features_extractor_class", SharedLinearExtractor)
        shared = kwargs.get("share_features_extractor", True)
        if not issubclass(kwargs["features_extractor_class"], SharedLinearExtractor) or not shared:
            raise ValueError("PriorMlpPolicy runs on a SharedLinearExtractor (or subclass), shared by both heads")
        kwargs["features_extractor_kwargs"] = {
            **kwargs.get("features_extractor_kwargs", {}),
            "input_size": n,
        }
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        self._build_prior()
        super()._build(lr_schedule)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data.update(self._prior_parameters())
        return data

    def _run(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        game_obs, bonus = self._split(obs)
        latent_pi, latent_vf = self.mlp_extractor(self.features_extractor(game_obs))
        logits = self.action_net(latent_pi)
        return (logits if bonus is None else logits + bonus), self.value_net(latent_vf)

    def _run_logits(self, obs: torch.Tensor) -> torch.Tensor:
        """The logits of ``_run`` without the value head (acting needs no value): the same numbers."""
        game_obs, bonus = self._split(obs)
        logits = self.action_net(self.mlp_extractor.forward_actor(self.features_extractor(game_obs)))
        return logits if bonus is None else logits + bonus
