"""Regenerate the README's picture of each game: ``python docs/make_images.py``.

Each image is a seeded random game stopped part-way, drawn from the seat to move's point of view
by the env's ``rgb_array`` render mode.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

import jericho_env

STEPS = {"grid": 30, "walls": 40, "castles": 14}


def main() -> None:
    """Write docs/images/<game>.png for every game."""
    out = Path(__file__).resolve().parent / "images"
    out.mkdir(exist_ok=True)
    for game in jericho_env.GAME_IDS:
        env = jericho_env.make(game, render_mode="rgb_array")
        env.reset(seed=7)
        rng = np.random.default_rng(7)
        for _ in range(STEPS[game]):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        path = out / f"{game}.png"
        Image.fromarray(env.render()).save(path, optimize=True)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
