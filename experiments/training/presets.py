"""Every learner's defaults as data: per learner, a ``default`` entry and, per game, only what differs from it.

``PPO`` (``experiments.train``), ``EXIT`` (``experiments.exit``) and ``DMC`` (``experiments.dmc``), as
rl-baselines3-zoo's ``hyperparams/*.yml`` but Python dicts (no new dependency, the values keep their types). Each
learner's config class merges ``default``, the game's entry and the values given on the command line into every
value a run uses; a game's entry states what its measurements changed (docs/results.md; docs/dmc.md).
"""

from __future__ import annotations

from typing import Any

# ----------------------------------------------------------------------------------------------------------
# PPO by batched self-play against a pool (experiments.train)
PPO: dict[str, dict[str, Any]] = {
    "default": {
        "timesteps": 1_000_000,
        "seed": 0,
        "n_envs": 64,
        "shards": 2,
        "update_threads": 2,
        "policy": "mlp",
        "net": "256,128",
        "learning_rate": 3e-4,
        "lr_schedule": "constant",
        "n_steps": 64,
        "batch_size": 2048,
        "n_epochs": 4,
        "gamma": 0.997,
        "gae_lambda": 0.95,
        "ent_coef": 0.01,
        "prior": "none",
        "prior_weight": 5.0,
        "init": None,
        "pool": "random,greedy",
        "snapshot_every": 100_000,
        "max_snapshots": 5,
        "eval_every": 200_000,
        "eval_opponent": "greedy",
        "eval_deals": 50,
        "checkpoint_every": 200_000,
        "final_deals": 250,
        "workers": 2,
    },
    "grid": {
        "policy": "grid-cells",
        "prior": "greedy-scores",
        "pool": "greedy",
        "n_steps": 32,
        "batch_size": 1024,
        "n_epochs": 2,
        "snapshot_every": 200_000,
        "eval_every": 250_000,
        "checkpoint_every": 250_000,
    },
    "walls": {
        "timesteps": 4_000_000,
        "prior": "greedy-scores",
        "pool": "random,greedy,greedy",
        "n_envs": 256,
        "n_steps": 16,
        "snapshot_every": 250_000,
        "eval_every": 500_000,
        "checkpoint_every": 500_000,
    },
    "castles": {
        "timesteps": 8_000_000,
        "net": "128,64",
        "n_envs": 256,
        "n_steps": 16,
        "n_epochs": 3,
        "learning_rate": 1e-3,
        "lr_schedule": "linear",
        "pool": "random,random,greedy,greedy",
        "snapshot_every": 250_000,
        "eval_every": 500_000,
        "eval_deals": 100,
        "checkpoint_every": 500_000,
    },
}

# ----------------------------------------------------------------------------------------------------------
# Expert iteration (experiments.exit). What each value is based on: docs/results.md, "Expert iteration".
EXIT: dict[str, dict[str, Any]] = {
    "default": {
        "seed": 0,
        "iterations": 8,  # generate -> learn -> evaluate, this many times
        "games": 200,  # self-play games per iteration
        "games_at_once": 25,  # games a worker plays in lockstep (one forward pass per round for all their leaves)
        "simulations": 64,  # search simulations per self-play move
        "c_puct": 1.5,  # PUCT's exploration weight
        "dirichlet_alpha": 0.5,  # root noise in self-play (AlphaZero): Dirichlet(alpha) per legal action...
        "dirichlet_fraction": 0.25,  # ...mixed into the root prior with this weight
        "temperature_moves": 6,  # a seat's first decisions drawn from the visit distribution, then the most visited
        "start": "ppo",  # the first network: "ppo" (a PPO checkpoint), "prior" (greedy's scores), "scratch"
        "init": None,  # the checkpoint "ppo" starts from (None: --ppo's)
        "ppo": None,  # the default PPO run's checkpoint: opponent in evaluations and the final table
        "policy": "auto",  # for "prior" and "scratch": the network, as experiments.train's --policy
        "buffer": 60_000,  # training rows kept (the latest)
        "learning_rate": 3e-4,
        "weight_decay": 1e-4,
        "batch_size": 512,
        "updates": 300,  # minibatch steps per iteration
        "value_weight": 1.0,
        "eval_deals": 100,  # deals per evaluation opponent each iteration (network alone)
        "final_deals": 250,  # deals per pair in the final table
        "final_simulations": None,  # exit-search and ismcts in the final table (None: ismcts's default budget)
        "workers": 2,
        "expert": "puct",  # who plays the games and gives the targets, the network in search: "puct", or
        # "rollouts" (its own games played on from every action)
        "expert_simulations": None,  # "rollouts": games per action (None: 16)
        "expert_temperature": 0.1,  # "rollouts": its policy softmax(log prior + Q / this)
        "target": "policy",  # what the network learns at a decision: the expert's distribution, or
        # ("advantage", rollouts only) its logits regressed on log prior + centred Q / expert_temperature
    },
}

# ----------------------------------------------------------------------------------------------------------
# Deep Monte-Carlo (experiments.dmc), sized on 2 loaded cores. What each game's entry is based on: docs/dmc.md.
DMC: dict[str, dict[str, Any]] = {
    "default": {
        "seed": 0,
        "positions": 10_000_000,
        "envs": 512,
        "rounds": 16,
        "epsilon": 0.05,
        "buffer": 400_000,
        "batch_size": 1024,
        "learning_rate": 5e-4,
        "learning_rate_end": None,
        "anneal": 1.0,
        "clip": 10.0,
        "net": "512,512,256",
        "features": "game",
        "prior": "none",
        "versus_share": 0.0,
        "versus": "greedy",
        "lam": 1.0,
        "replay_ratio": 1.0,
        "eval_every": 1_000_000,
        "eval_deals": 200,
        "checkpoint_seconds": 120.0,
        "init": None,
        "teacher": None,
        # the level of the teacher's Q weighs a tenth of the differences between actions: in castles above the
        # plain squared error from a fresh network and from one of the teacher's (docs/dmc.md)
        "teacher_level": 0.1,
        "backend": "local",
    },
    # lambda-returns (0.8): at 10^7 positions above the outcome alone in every seed; the learning rate falling
    # to 5e-5 over the last fifth of the budget: above a constant one (docs/dmc.md)
    "castles": {"lam": 0.8, "learning_rate_end": 5e-5, "anneal": 0.2},
    # greedy's scores as an input: at every point measured above the observation alone; lambda-returns
    # (0.8): they climb with data where the outcome alone fell (docs/dmc.md)
    "walls": {"prior": "greedy-scores", "lam": 0.8},
    # the same, and every game one learning seat against greedy: self-play left greedy's level (docs/dmc.md)
    "grid": {
        "envs": 256,
        "rounds": 8,
        "buffer": 200_000,
        "net": "256,256",
        "batch_size": 512,
        "prior": "greedy-scores",
        "lam": 0.8,
        "versus_share": 1.0,
    },
}
