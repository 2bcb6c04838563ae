"""Agents as batch policies for the batched self-play env (``jericho_env.envs.selfplay``).

A batch policy is a callable ``(observations (B, D) float32, masks (B, A) bool) -> actions (B,)``.
``make_batch_policy(name, game_id)`` builds the cheapest one for a registered agent (``agent_batch_policy``);
``NetworkBatchPolicy`` runs a policy network once for the whole batch, ``JointNetworks`` several in one pass.
"""

from __future__ import annotations

import copy
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from jericho_env.envs.selfplay import RandomBatchPolicy
from jericho_env.user_agents import ActBatchPolicy, RowByRowPolicy, batch_policy_of

__all__ = [
    "ActBatchPolicy",
    "AgentBatchPolicy",
    "JointNetworks",
    "NetworkBatchPolicy",
    "RandomBatchPolicy",
    "agent_batch_policy",
    "batch_policy",
    "make_batch_policy",
    "play_matches",
]

Hint = Callable[[np.ndarray, np.ndarray], np.ndarray]  # agents.prior.Prior, or any such function


# an agent asked row by row (with information views for searching agents): the engine's one implementation
AgentBatchPolicy = RowByRowPolicy


def make_batch_policy(name: str, game_id: str, seed: int | None = None, **options: Any) -> Any:
    """The batch policy of the registered agent ``name`` (``agents.make``'s names and arguments), or of an agent
    spec as the command lines write it (``ppo=PATH``, ``ismcts=300``, ``mine=path/file.py:Cls``)."""
    import agents
    from agents.registry import is_target, parse_spec

    if not is_target(name):
        _, name, given = parse_spec(name, game_id)
        seed, options = given.pop("seed", seed), {**given, **options}

    if name == "random":
        agents.make(name, game_id, **options)  # the usual errors for an unknown game or option
        return RandomBatchPolicy(seed)
    agent = agents.make(name, game_id, seed=seed, **options)
    if name == "greedy":
        from agents.greedy import batch_twin

        twin = batch_twin(agent, game_id, **options)
        if twin is not None:
            return twin
    return agent_batch_policy(agent, game_id, seed, name, options)


def agent_batch_policy(agent: Any, game_id: str, seed: int | None, name: str, options: dict[str, Any]) -> Any:
    """A made agent as its cheapest batch policy: its own ``batch_policy()`` where it has one (dmc,
    exit-search); a network agent (``agents.ppo.PPOAgent`` and subclasses: ppo, exit) as a
    ``NetworkBatchPolicy``, the same choice per row (greedy or sampling as the agent) with a hint of the
    prior it was trained on of its own; an agent with ``act_batch`` (the adapters, your own) through it;
    any other agent asked row by row (``AgentBatchPolicy``)."""
    hook = getattr(agent, "batch_policy", None)
    if callable(hook):
        return hook()
    ppo = sys.modules.get("agents.ppo")  # loaded whenever the agent is a PPOAgent
    if ppo is not None and isinstance(agent, ppo.PPOAgent):
        from agents.prior import make_prior

        hint = make_prior(agent.prior_name, game_id, seed=seed, **options)
        return NetworkBatchPolicy(agent.policy, agent.deterministic, seed, name=name, hint=hint)
    return batch_policy_of(agent)


class NetworkBatchPolicy:
    """A MaskablePPO policy (``model.policy``) as a batch policy: one forward pass per call.

    ``deterministic=False`` samples from the masked distribution, ``True`` takes the most probable legal action.
    The policy is used as given (pass a frozen copy for a snapshot); ``hint`` appends a prior's floats to the
    observations first (``agents.prior.make_prior``). A sampling plain MLP acts in numpy (``agents.nets.numpy_mlp``)
    with a numpy generator, the others through torch with a torch generator, both seeded from ``seed``.
    ``joint=True`` lets the batched self-play env ask it together with other joint policies (``JointNetworks``).
    """

    uses_observation = True

    def __init__(
        self,
        policy: Any,
        deterministic: bool = False,
        seed: int | None = None,
        name: str = "ppo",
        hint: Hint | None = None,
        joint: bool = False,
    ) -> None:
        import torch

        self._torch = torch
        self.policy = policy
        self.policy.set_training_mode(False)
        self.deterministic = deterministic
        self.name = name
        self.hint = hint
        self.seed = seed
        self.generator = self._generator(seed)
        self._plan: tuple[Any, ...] | None = None  # (parameters, their versions, numpy plan or None)
        self._joint = bool(joint)
        self._stack_key = None
        if self._joint:  # the architecture does not change: its key once
            from agents.nets.stacked import stack_key

            self._stack_key = stack_key(policy)

    @property
    def joint(self) -> JointNetworks | None:
        """This process's ``JointNetworks`` with ``joint=True``, else None (a class attribute: survives pickling)."""
        return _JOINT if self._joint else None

    def stack_key(self) -> Any:
        """``agents.nets.stacked.stack_key`` of the network with ``joint=True``, else None (asked on its own)."""
        return self._stack_key

    def _generator(self, entropy: Any) -> Any:
        """(torch generator, numpy generator) seeded from ``entropy``: draws by torch, or by the numpy plan."""
        state = np.random.SeedSequence(entropy).generate_state(1)[0]
        return self._torch.Generator().manual_seed(int(state)), np.random.default_rng(int(state))

    def for_shard(self, shard: int) -> NetworkBatchPolicy:
        """This policy with a generator of its own for shard ``shard`` (``ShardedVecEnv``); the network is shared."""
        other = copy.copy(self)
        other.generator = self._generator(None if self.seed is None else [int(self.seed), int(shard)])
        return other

    def numpy_plan(self) -> Any:
        """The network as ``agents.nets.numpy_mlp.MlpPlan`` when this policy samples (not ``deterministic``)
        and the network is a plain MLP; else None (torch acts). Read again when the network is trained."""
        if self.deterministic:
            return None
        if self._plan is None:
            self._plan = (list(self.policy.parameters()), None, None)
        params, versions, plan = self._plan
        now = _versions([params])
        if versions != now:
            from agents.nets.numpy_mlp import mlp_plan

            plan = mlp_plan(self.policy)
            self._plan = (params, now, plan)
        return plan

    def __call__(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        if self.hint is not None:
            observations = np.concatenate([observations, self.hint(observations, masks)], axis=1)
        plan = self.numpy_plan()
        if plan is not None:  # a few rows at a time in self-play: numpy, without torch's cost per call
            from agents.nets import numpy_mlp

            uniforms = self.generator[1].random(len(masks))
            return numpy_mlp.draw(numpy_mlp.logits(plan, observations), masks, uniforms)
        with self._torch.no_grad():
            logits, numbers = _masked_logits(self.policy, observations, masks)
            return self.choose(logits, numbers)

    def choose(self, logits: Any, numbers: Any) -> np.ndarray:
        """The actions of masked ``logits`` (over ``numbers``' actions where not None): mode or a draw."""
        from agents.nets.common import sample_rows

        torch = self._torch
        if self.deterministic:
            choice = logits.argmax(dim=1)
        else:
            choice = sample_rows(torch.softmax(logits, dim=1), self.generator[0])
        return (choice if numbers is None else numbers.gather(1, choice[:, None]).squeeze(1)).numpy()  # type: ignore[no-any-return]


def _masked_logits(policy: Any, observations: np.ndarray, masks: np.ndarray) -> tuple[Any, Any]:
    """(logits with illegal actions at -inf, the action number of each column or None for all actions)."""
    import torch

    obs = torch.as_tensor(observations, dtype=torch.float32)
    # a policy that scores only a subset of the actions holding every legal one (grid-cells) chooses
    # among those: the same choice, without normalising thousands of masked actions
    compact = policy._compact(obs, masks) if hasattr(policy, "_compact") else None
    if compact is not None:
        distribution, numbers, _ = compact
        return distribution.logits, numbers
    logits = policy.action_logits(obs) if hasattr(policy, "action_logits") else _mlp_logits(policy, obs)
    return logits.masked_fill(~torch.as_tensor(masks, dtype=torch.bool), float("-inf")), None


class JointNetworks:
    """Asks several ``NetworkBatchPolicy(joint=True)`` at once: those of one architecture in one forward pass.

    Called with ``[(policy, observations, masks), ...]``; returns one action array per policy. Policies whose
    networks stack (``agents.nets.stacked.stack_key``) are padded to the same number of rows and run through one
    stacked copy of their architecture (weights stacked once per set of networks, again when one is trained);
    sampling plain MLPs run in numpy, each on its own rows; hints of one ``key`` are computed once. Each policy
    chooses from its own rows with its own generator, as it would alone; anything else is asked on its own.
    """

    def __init__(self, cache_size: int = 32) -> None:
        self.cache_size = cache_size
        self._copies: dict[Any, Any] = {}  # per architecture (stack key), one StackedPolicies
        self._stacks: dict[tuple[int, ...], tuple[Any, ...]] = {}  # per set of networks (ids), their stacked weights

    def __call__(self, parts: list[tuple[Any, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        answers: list[np.ndarray | None] = [None] * len(parts)
        groups: dict[Any, list[int]] = {}
        plans: dict[int, Any] = {}  # the numpy plans of sampling plain MLPs, by part
        for k, (policy, _, _) in enumerate(parts):
            key = policy.stack_key() if isinstance(policy, NetworkBatchPolicy) else None
            if key is None:
                answers[k] = policy(parts[k][1], parts[k][2])
                continue
            plan = policy.numpy_plan()
            if plan is None:
                groups.setdefault(key, []).append(k)
            else:
                plans[k] = plan
        if plans:
            members = list(plans)
            chosen = self._numpy([parts[k] for k in members], [plans[k] for k in members])
            for k, actions in zip(members, chosen, strict=True):
                answers[k] = actions
        for members in groups.values():
            if len(members) == 1:
                k = members[0]
                answers[k] = parts[k][0](parts[k][1], parts[k][2])
                continue
            # one order per set of networks, whichever games wait first: the set's stacked weights are reused
            members.sort(key=lambda k: id(parts[k][0].policy))
            for k, actions in zip(members, self._stacked([parts[k] for k in members]), strict=True):
                answers[k] = actions
        return answers  # type: ignore[return-value]

    def _numpy(self, parts: list[tuple[Any, np.ndarray, np.ndarray]], plans: list[Any]) -> list[np.ndarray]:
        """Sampling plain MLPs through their numpy ``plans``: each on its own rows, one draw for all."""
        from agents.nets import numpy_mlp

        sizes = [len(m) for _, _, m in parts]
        observations = self._with_hints(parts)
        logits = np.concatenate([numpy_mlp.logits(plan, o) for plan, o in zip(plans, observations, strict=True)])
        uniforms = np.concatenate([p.generator[1].random(n) for (p, _, _), n in zip(parts, sizes, strict=True)])
        chosen = numpy_mlp.draw(logits, np.concatenate([m for _, _, m in parts]), uniforms)
        return np.split(chosen, np.cumsum(sizes)[:-1])

    def _stacked(self, parts: list[tuple[Any, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        import torch

        policies = [p for p, _, _ in parts]
        sizes = [len(m) for _, _, m in parts]
        rows = max(sizes)
        obs = np.concatenate([_pad(o, rows) for o in self._with_hints(parts)])
        masks = np.concatenate([_pad(m, rows) for _, _, m in parts])
        stacked = self._stack(policies, rows)
        with torch.no_grad():
            logits, numbers = _masked_logits(stacked, obs, masks)
            out = []
            for k, (policy, n) in enumerate(zip(policies, sizes, strict=True)):
                block = slice(k * rows, k * rows + n)
                out.append(policy.choose(logits[block], None if numbers is None else numbers[block]))
        return out

    @staticmethod
    def _with_hints(parts: list[tuple[Any, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """Each part's observations with its policy's hint appended; hints of one ``key`` in one call."""
        out: list[np.ndarray] = [obs for _, obs, _ in parts]
        by_hint: dict[Any, list[int]] = {}
        for k, (policy, _, _) in enumerate(parts):
            if policy.hint is not None:
                by_hint.setdefault(getattr(policy.hint, "key", None) or id(policy.hint), []).append(k)
        for members in by_hint.values():
            hint = parts[members[0]][0].hint
            hints = hint(np.concatenate([parts[k][1] for k in members]), np.concatenate([parts[k][2] for k in members]))
            start = 0
            for k in members:
                n = len(parts[k][2])
                out[k] = np.concatenate([parts[k][1], hints[start : start + n]], axis=1)
                start += n
        return out

    def _stack(self, policies: list[Any], rows: int) -> Any:
        """The stacked copy of these policies' networks, for ``rows`` rows each."""
        from agents.nets.stacked import StackedPolicies

        networks = [p.policy for p in policies]
        key = policies[0].stack_key()
        stacked = self._copies.get(key)
        if stacked is None:
            stacked = self._copies[key] = StackedPolicies(networks[0])
        ids = tuple(id(n) for n in networks)
        entry = self._stacks.pop(ids, None)
        if entry is None or _versions(entry[1]) != entry[2]:  # new, or a network was trained since
            params = [list(n.parameters()) for n in networks]
            # the entry keeps the networks alive, so no other network can take one of their ids
            entry = (networks, params, _versions(params), stacked.weights(networks))
        self._stacks[ids] = entry  # most recently used last
        while len(self._stacks) > self.cache_size:
            del self._stacks[next(iter(self._stacks))]
        return stacked.module(entry[3], rows)


_JOINT = JointNetworks()


def _versions(params: list[list[Any]]) -> tuple[int, ...]:
    """Per network, the sum of its parameters' in-place update counters (changes when it is trained)."""
    return tuple(sum(p._version for p in ps) for ps in params)


def _pad(rows: np.ndarray, count: int) -> np.ndarray:
    """``rows`` followed by copies of its first row, ``count`` rows in all."""
    if len(rows) == count:
        return rows
    return np.concatenate([rows, np.repeat(rows[:1], count - len(rows), axis=0)])


def _mlp_logits(policy: Any, obs: Any) -> Any:
    """Unmasked logits of an SB3 actor-critic policy (``MlpPolicy`` and its subclasses)."""
    features = policy.extract_features(obs, policy.pi_features_extractor)
    latent_pi = policy.mlp_extractor.forward_actor(features)
    return policy.action_net(latent_pi)


def batch_policy(agent: Any) -> Any:
    """``agent`` as a batch policy: ``"random"`` -> ``RandomBatchPolicy``; agents -> their ``act_batch`` or ``act``."""
    if isinstance(agent, str) and agent == "random":
        return RandomBatchPolicy()
    if hasattr(agent, "act"):
        return batch_policy_of(agent)
    if callable(agent):
        return agent
    raise ValueError(f"{agent!r} is neither an agent (act) nor a batch policy (callable)")


def play_matches(
    game_id: str,
    learner: Any,
    opponent: Any,
    deals: int,
    seed: int,
    options: dict[str, Any] | None = None,
) -> tuple[float, int, int, int]:
    """``learner`` alone against copies of ``opponent`` (batch policies), on ``deals`` deals in every seat.

    Returns (score, wins, draws, games), a draw counting half a win, as the tournament tables do.
    """
    from jericho_env.envs.selfplay import SelfPlayVector

    options = dict(options or {})
    probe = SelfPlayVector(game_id, 1, **options)
    n = probe.num_players
    wins = draws = games = 0
    for seat in range(n):
        vector = SelfPlayVector(game_id, deals, opponents=[opponent], seat=seat, seed=seed, rules=probe.rules)
        obs, masks = vector.reset()
        finished = np.zeros(deals, dtype=bool)
        while not finished.all():
            obs, rewards, dones, _ = vector.step(learner(obs, masks))
            masks = vector.action_masks()
            for i in np.flatnonzero(dones & ~finished):
                finished[i] = True
                wins += int(rewards[i] > 1e-9)
                draws += int(abs(rewards[i]) <= 1e-9)
        games += deals
    score = (wins + 0.5 * draws) / games
    return score, wins, draws, games
