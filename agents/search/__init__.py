"""Search: the engines that look ahead from a position, each beside the agent that plays with it.

| module | what it is |
| --- | --- |
| ``engine`` | information-set MCTS in Python (``ISMCTS``), its determinizations (``Redeal``), its setting checks |
| ``ismcts`` | the ``ismcts`` agent (``ISMCTSAgent``): the engine (Python or compiled) behind ``agents.make`` |
| ``compiled`` | the same searches compiled with Numba, one driver for every game (and PUCT's compiled driver) |
| ``puct`` | PUCT over a policy network's prior (``exit-search``'s search) |
| ``rollout_search`` | policy-rollout search: each legal move scored by rollouts of a policy |
| ``row_calls``, ``row_values`` | calling a game's compiled row functions by address; rollout values of rows |
"""

from agents.search.engine import ISMCTS, Redeal, RowPolicy, check_settings

__all__ = ["ISMCTS", "Redeal", "RowPolicy", "check_settings"]
