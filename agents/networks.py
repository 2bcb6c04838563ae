"""The old home of the PPO networks, kept so that saved checkpoints still load.

The networks now live in ``agents.nets`` (``common``, ``grid``, ``walls`` and the registry of names).
Checkpoints written before the move name their classes by this module's path (a pickled
``agents.networks.GridConvPolicy``, ``PriorMlpPolicy``, ``SharedLinearExtractor`` or
``WallsExtractor``), and loading one imports them from here. New code imports from ``agents.nets``.
"""

from agents.nets.common import PriorMlpPolicy, SharedLinearExtractor, _LogitsPolicy
from agents.nets.grid import GRID_TABLE_FIELDS, GridConvNet, GridConvPolicy, GridFeatures, grid_board_size
from agents.nets.walls import WallsExtractor, WallsFeatures, walls_num_players

__all__ = [
    "GRID_TABLE_FIELDS",
    "GridConvNet",
    "GridConvPolicy",
    "GridFeatures",
    "PriorMlpPolicy",
    "SharedLinearExtractor",
    "WallsExtractor",
    "WallsFeatures",
    "_LogitsPolicy",
    "grid_board_size",
    "walls_num_players",
]
