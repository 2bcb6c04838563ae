"""The classes that older Stable-Baselines3 checkpoints name by pickled path, under the names they use.

Checkpoints written before the networks moved to ``agents.nets`` name their classes ``agents.networks.X`` (a
pickled ``GridConvPolicy``, ``PriorMlpPolicy``, ``SharedLinearExtractor`` or ``WallsExtractor``): that path is
this module (``agents._pickled_paths.PICKLED``), so loading one (``trust=True``) finds them here. New code imports from
``agents.nets``.
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
