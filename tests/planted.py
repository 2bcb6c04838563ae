"""A planted exploitable agent for the best-response tests: it always plays its lowest legal action."""

from __future__ import annotations

from typing import Any

import numpy as np


class Lowest:
    """The lowest legal action, for any game (``lowest=tests/planted.py:Lowest`` on the command lines)."""

    name = "lowest"

    def __init__(self, game_id: str, seed: int | None = None) -> None:
        self.game_id = game_id

    def act(self, observation: dict[str, Any]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.asarray(masks, bool).argmax(axis=1)


class TakeTwoWhenHigh:
    """Toy's (``tests/toy_game.py``) planted player: takes two tokens when its card is 5 or more, else one."""

    name = "take-two-when-high"

    def __init__(self, game_id: str, seed: int | None = None) -> None:
        self.game_id = game_id

    def act(self, observation: dict[str, Any]) -> int:
        return int(self.act_batch(observation["observation"][None], observation["action_mask"][None])[0])

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        high = np.asarray(observations)[:, :10].argmax(axis=1) >= 5
        return np.where(high & np.asarray(masks, bool)[:, 1], 1, 0)
