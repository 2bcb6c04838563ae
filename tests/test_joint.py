"""Joint opponents: the batched env asks policies of one joint in one call, and network snapshots of one
architecture run in one stacked forward pass with the same choices as separate calls."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest
import torch

from jericho_env import IllegalActionError
from jericho_env.envs.selfplay import SelfPlayVector


def first_legal(observations: Any, masks: np.ndarray) -> np.ndarray:
    return np.argmax(masks, axis=1)


def last_legal(observations: Any, masks: np.ndarray) -> np.ndarray:
    return masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)


class Recording:
    """A joint that asks each policy itself and records which policies each call held."""

    def __init__(self, answer: Any = None) -> None:
        self.calls: list[list[str]] = []
        self.answer = answer

    def __call__(self, parts: list[tuple[Any, Any, np.ndarray]]) -> list[np.ndarray]:
        self.calls.append([p.name for p, _, _ in parts])
        if self.answer is not None:
            return self.answer(parts)  # type: ignore[no-any-return]
        return [p(obs, masks) for p, obs, masks in parts]


class Named:
    def __init__(self, name: str, fn: Any, joint: Any = None) -> None:
        self.name, self.fn, self.joint = name, fn, joint

    def __call__(self, observations: Any, masks: np.ndarray) -> np.ndarray:
        return self.fn(observations, masks)  # type: ignore[no-any-return]


def play(vector: SelfPlayVector, steps: int) -> list[np.ndarray]:
    out = []
    obs, masks = vector.reset()
    for _ in range(steps):
        obs, rewards, dones, _ = vector.step(first_legal(None, masks))
        masks = vector.action_masks()
        out += [obs, rewards, dones]
    return out


def test_policies_of_one_joint_are_asked_in_one_call_and_play_the_same_games() -> None:
    joint = Recording()
    pool = [Named("a", first_legal, joint), Named("b", last_legal, joint), Named("c", first_legal)]
    plain = [Named("a", first_legal), Named("b", last_legal), Named("c", first_legal)]
    vector = SelfPlayVector("walls", 24, opponents=pool, seed=5)
    reference = SelfPlayVector("walls", 24, opponents=plain, seed=5)
    for x, y in zip(play(vector, 30), play(reference, 30), strict=True):
        np.testing.assert_array_equal(x, y)
    assert joint.calls and all("c" not in call for call in joint.calls)
    assert sum(len(call) > 1 for call in joint.calls) > len(joint.calls) / 2  # both waiting: asked together
    # one joint call counts as one call, as the reference's two separate calls count two
    assert vector.opponent_decisions == reference.opponent_decisions
    assert vector.opponent_calls == reference.opponent_calls - sum(len(call) - 1 for call in joint.calls)


def test_a_joint_that_answers_wrongly_is_named() -> None:
    short = Recording(answer=lambda parts: [first_legal(None, parts[0][2])])
    pool = [Named("a", first_legal, short), Named("b", last_legal, short)]
    vector = SelfPlayVector("walls", 8, opponents=pool, seed=1)
    with pytest.raises(ValueError, match="answered 1 of 2"):
        play(vector, 20)
    illegal = Recording(answer=lambda parts: [np.full(len(m), -1) for _, _, m in parts])
    vector = SelfPlayVector("walls", 8, opponents=[Named("bad", first_legal, illegal)], seed=1)
    with pytest.raises(IllegalActionError, match="'bad' chose illegal action -1"):
        play(vector, 5)


def _prior(cfg: Any, seed: int) -> Any:
    """The run's prior (``agents.prior.make_prior``), or None without one."""
    from agents.prior import make_prior

    return make_prior(cfg.prior, cfg.game, seed=seed, **cfg.options)


def _model(game: str) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    """A preset's model, the run's config and a few learner positions (observations without the prior, masks)."""
    from agents.checkpoint import PolicySpec
    from experiments.train import make_config
    from experiments.training.ppo.model import PPO_SETTINGS, make_model
    from experiments.training.ppo.pool import opponent_pool
    from experiments.training.ppo.selfplay import make_vec_env

    cfg = make_config(game, n_envs=48, shards=1, n_steps=8, batch_size=96)
    pool = opponent_pool(game, cfg.pool.split(","), cfg.seed, cfg.options)
    vec = make_vec_env(game, cfg.n_envs, pool, cfg.prior, seed=0, options=cfg.options, prior_seed=0)
    network = PolicySpec(cfg.policy, cfg.net, cfg.prior, cfg.prior_weight)
    model = make_model(vec, game, network, {k: getattr(cfg, k) for k in PPO_SETTINGS}, cfg.seed, cfg.options)
    vec.reset()
    rng = np.random.default_rng(0)
    rows_o, rows_m = [], []
    for _ in range(4):
        masks = vec.action_masks()
        vec.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        rows_o.append(vec.vector._obs.copy())
        rows_m.append(vec.action_masks())
    vec.close()
    return model, cfg, np.concatenate(rows_o), np.concatenate(rows_m)


def _perturbed(policy: Any, count: int) -> list[Any]:
    out = []
    for k in range(count):
        net = copy.deepcopy(policy)
        generator = torch.Generator().manual_seed(k)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(torch.randn(p.shape, generator=generator) * 0.3)
        out.append(net)
    return out


@pytest.mark.parametrize("game", ["grid", "walls", "castles"])
def test_stacked_snapshots_choose_as_separate_calls(game: str) -> None:
    from agents.batch import JointNetworks, NetworkBatchPolicy

    model, cfg, obs, masks = _model(game)
    networks = _perturbed(model.policy, 4)
    sizes, rng = [5, 9, 1, 6], np.random.default_rng(1)
    rows = [rng.choice(len(obs), n, replace=False) for n in sizes]

    def policies(joint: bool) -> list[NetworkBatchPolicy]:
        made = []
        for k, net in enumerate(networks):
            det = k == 2  # one evaluating (its mode), the others sampling with their own generators
            made.append(NetworkBatchPolicy(net, det, seed=k, hint=_prior(cfg, seed=k), joint=joint))
        return made

    separate, together = policies(False), policies(True)
    assert together[0].stack_key() is not None
    assert all(p.joint is not None for p in together) and separate[0].joint is None
    joint = JointNetworks()
    for _ in range(3):  # the generators advance alike
        expected = [p(obs[r], masks[r]) for p, r in zip(separate, rows, strict=True)]
        answers = joint([(p, obs[r], masks[r]) for p, r in zip(together, rows, strict=True)])
        for e, a, r in zip(expected, answers, rows, strict=True):
            np.testing.assert_array_equal(e, a)
            assert masks[r, a].all()
    # stacked once for these networks (grid); sampling plain MLPs (castles, walls) run in numpy instead
    from agents.nets.numpy_mlp import mlp_plan

    plain = mlp_plan(networks[0]) is not None
    assert plain == (game != "grid")
    assert len(joint._stacks) == (0 if plain else 1)  # numpy plans are not stacked
    fewer = [r[: max(1, len(r) // 2)] for r in rows]  # the same networks on fewer rows: the copy is reloaded
    expected = [p(obs[r], masks[r]) for p, r in zip(separate, fewer, strict=True)]
    answers = joint([(p, obs[r], masks[r]) for p, r in zip(together, fewer, strict=True)])
    for e, a in zip(expected, answers, strict=True):
        np.testing.assert_array_equal(e, a)
    # a network trained in place is seen: the stack is rebuilt
    with torch.no_grad():
        for p in networks[1].parameters():
            p.mul_(-1.0)
    expected = [p(obs[r], masks[r]) for p, r in zip(separate, rows, strict=True)]
    answers = joint([(p, obs[r], masks[r]) for p, r in zip(together, rows, strict=True)])
    for e, a in zip(expected, answers, strict=True):
        np.testing.assert_array_equal(e, a)


@pytest.mark.parametrize("game", ["grid", "walls", "castles"])
def test_acting_logits_are_the_training_logits(game: str) -> None:
    """``action_logits`` (snapshots, evaluation; it may skip the value head) equals ``_run``'s logits."""
    model, cfg, obs, masks = _model(game)
    prior = _prior(cfg, seed=0)
    full = torch.as_tensor(obs if prior is None else np.concatenate([obs, prior(obs, masks)], axis=1))
    policy = _perturbed(model.policy, 1)[0]
    with torch.no_grad():
        if hasattr(policy, "_run"):  # this package's policies
            acting, training = policy.action_logits(full), policy._run(policy.preprocess(full))[0]
            torch.testing.assert_close(acting, training, rtol=0, atol=0)  # the same numbers, bit for bit
        else:  # SB3's own actor-critic: the snapshots' path against SB3's distribution (normalised)
            from agents.batch import _mlp_logits

            acting = torch.log_softmax(_mlp_logits(policy, full), dim=1)
            training = policy.get_distribution(full).distribution.logits
            torch.testing.assert_close(acting, training)  # normalised in two ways: rounding apart


def test_networks_that_cannot_be_stacked_are_asked_one_by_one() -> None:
    from agents.batch import JointNetworks, NetworkBatchPolicy
    from agents.nets.stacked import stack_key, stack_policies

    model, _, obs, masks = _model("castles")
    plain, odd = _perturbed(model.policy, 2)
    odd.features_extractor.norm = torch.nn.LayerNorm(4)  # a parameter outside a linear layer
    assert stack_key(plain) is not None and stack_key(odd) is None
    with pytest.raises(ValueError, match="cannot be stacked"):
        stack_policies([plain, odd], 3)
    together = [NetworkBatchPolicy(n, seed=k, joint=True) for k, n in enumerate((plain, odd))]
    separate = [NetworkBatchPolicy(n, seed=k) for k, n in enumerate((plain, odd))]
    answers = JointNetworks()([(p, obs[:7], masks[:7]) for p in together])
    for p, a in zip(separate, answers, strict=True):
        np.testing.assert_array_equal(p(obs[:7], masks[:7]), a)


def test_grouped_linear_is_each_layer_on_its_block_of_rows() -> None:
    from agents.nets.stacked import GroupedLinear

    layers = [torch.nn.Linear(6, 3) for _ in range(3)]
    x = torch.randn(3 * 4, 5, 6)  # 4 rows per layer, an inner dimension kept
    out = GroupedLinear(layers)(x)
    layers[1].bias = None  # type: ignore[assignment]  # a layer without bias adds nothing
    out = GroupedLinear(layers)(x)
    assert out.shape == (12, 5, 3)
    for k, layer in enumerate(layers):
        torch.testing.assert_close(out[4 * k : 4 * k + 4], layer(x[4 * k : 4 * k + 4]))
