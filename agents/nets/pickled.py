"""The classes that older Stable-Baselines3 checkpoints name by pickled path (``agents.networks.X``).

That path is this module (``agents._pickled_paths.PICKLED``); new code imports from ``agents.nets``.
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
