"""Adapters to RL libraries, one module each; none is imported by ``jericho_env`` itself.

* ``jericho_env.wrappers.sb3``: a ``gymnasium.make_vec`` vector env as a Stable-Baselines3 ``VecEnv``.
* ``jericho_env.wrappers.rllib``: RLlib env creator and the masked observation for its action-masking module.
* ``jericho_env.wrappers.torchrl``: TorchRL's ``PettingZooWrapper`` with the action mask.
* ``jericho_env.wrappers.tianshou``: Tianshou's ``PettingZooEnv`` with the action mask.

Each module imports its library at the top: import it only where that library is installed (its
extra in ``pyproject.toml``; recipes and the per-library venvs: ``docs/ecosystem.md``).
"""
