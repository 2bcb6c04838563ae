"""Baseline agents for jericho-env: ``agents.make(name, game_id, **kwargs)``.

Names: ``random``; ``greedy`` (one heuristic per game; ``greedy-capture`` is the grid one's own
name); ``ismcts`` (search); ``ppo`` (``path=`` a MaskablePPO checkpoint saved by ``experiments.train``);
``exit`` and ``exit-search`` (an expert-iteration network, ``experiments.exit``). Without ``path``,
``ppo``, ``exit`` and ``exit-search`` play the network shipped in the package for the game:
``zoo()`` lists them (``print(agents.zoo())``), ``agents.pretrained`` says how they are kept.
"""

import agents._pickled_paths  # noqa: F401  (the module paths that checkpoints already written name)
from agents.base import Agent, BaseAgent
from agents.pretrained import zoo
from agents.registry import AGENT_NAMES, make, parse_spec

__all__ = ["AGENT_NAMES", "Agent", "BaseAgent", "make", "parse_spec", "zoo"]
