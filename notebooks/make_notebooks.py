"""Regenerate the notebooks (committed without outputs): python notebooks/make_notebooks.py.

A code cell given as ``("picture", source)`` draws a picture: it carries the tag ``picture``, and the
documentation build (``scripts/docs_pages.py``), which runs the notebooks, fails if it shows no image.
"""

import nbformat as nbf

PICTURE = "picture"  # the tag of a cell that must show an image once run


def cell(kind, source):
    if kind == "md":
        return nbf.v4.new_markdown_cell(source)
    c = nbf.v4.new_code_cell(source)
    if kind == PICTURE:
        c.metadata["tags"] = [PICTURE]
    return c


def nb(cells):
    n = nbf.v4.new_notebook()
    n.cells = [cell(kind, source) for kind, source in cells]
    n.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return n


quick = [
    (
        "md",
        """# jericho-env quick start

Three card games as PettingZoo AEC environments. This notebook makes each env, plays a random game,
renders it, reads the observation layout and the action mask, and uses a rules engine directly.""",
    ),
    (
        "code",
        """import numpy as np
import jericho_env

print(jericho_env.GAME_IDS)""",
    ),
    ("md", "## Make each env and play one random game"),
    (
        "code",
        """def random_game(game_id, seed=0, **options):
    env = jericho_env.make(game_id, render_mode="ansi", **options)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(rng.choice(legal)))
        steps += 1
    return env, steps

for game_id in jericho_env.GAME_IDS:
    env, steps = random_game(game_id)
    print(f"{game_id}: {steps} agent steps, rewards {env.unwrapped.rules.returns(env.unwrapped.state)}")""",
    ),
    ("md", "## Render a position: text from the mover's seat, and an image"),
    (
        "code",
        """env = jericho_env.make("grid", render_mode="ansi")
env.reset(seed=7)
print(env.render())""",
    ),
    (
        "picture",
        """%matplotlib inline
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 3, figsize=(15, 5))
for ax, game_id in zip(axes, jericho_env.GAME_IDS):
    env = jericho_env.make(game_id, render_mode="rgb_array")
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    for _ in range(12):  # a few random moves so the table is not empty
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            break
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    ax.imshow(env.render())
    ax.set_title(game_id)
    ax.axis("off")
plt.show()""",
    ),
    (
        "md",
        """## The observation and the mask

The observation is one flat float32 vector in [0, 1]; its layout names the parts. The mask is an
int8 vector over the whole action space: 1 for the legal actions of the agent to move, all 0 for the others.""",
    ),
    (
        "code",
        """from IPython.display import Markdown, display

env = jericho_env.make("castles")
env.reset(seed=1)
rules = env.unwrapped.rules
display(Markdown(rules.layout.markdown_table()))
obs = env.observe(env.agent_selection)
for name, part in rules.layout.split(obs["observation"]).items():
    print(f"{name:>16}: {np.round(part.ravel()[:12], 2)}")
legal = np.flatnonzero(obs["action_mask"])
print("legal:", [env.unwrapped.action_to_str(a) for a in legal])""",
    ),
    ("md", "## The rules engine on its own (no RL API): clone, apply, determinize, save"),
    (
        "code",
        """import json

rules = jericho_env.make_rules("walls", num_players=3)
rng = np.random.default_rng(0)
state = rules.initial_state(rng)
for _ in range(10):
    legal = rules.legal_actions(state)
    rules.apply(state, legal[0])
seat = rules.current_player(state)
print("to move:", seat, [rules.action_to_str(state, a) for a in rules.legal_actions(state)][:8])
guess = rules.determinize(state, seat, rng)           # redeal what this seat cannot see
assert np.array_equal(rules.observe(state, seat), rules.observe(guess, seat))
saved = json.dumps(rules.to_dict(state))              # a position for a bug report
again = rules.from_dict(json.loads(saved))
assert rules.to_dict(again) == rules.to_dict(state)
print(len(saved), "characters of JSON")""",
    ),
    ("md", "## Bad input gets a clear error, and the env is unchanged"),
    (
        "code",
        """env = jericho_env.make("grid")
env.reset(seed=0)
mask = env.observe(env.agent_selection)["action_mask"]
try:
    env.step(int(np.flatnonzero(mask == 0)[0]))
except jericho_env.IllegalActionError as e:
    print("IllegalActionError:", e)
try:
    jericho_env.make("grid", board_size=4)
except ValueError as e:
    print("ValueError:", e)""",
    ),
]

train = [
    (
        "md",
        """# Train PPO and evaluate it

A small MaskablePPO run (self-play against a pool of random, greedy and snapshots), then a round-robin
tournament with seat-swapped deals and the win-rate heatmap. The training budget here is tiny so that
the notebook runs in about a minute: the network has barely learned, so expect it to score close to
random. `python -m experiments.train GAME` uses the full default budget. The tournament is not tiny:
it plays `DEALS` deals per pairing in both seat orders (400 games per cell by default, a few seconds
with the batched engine), so each score's 95% interval is about ±5 points.""",
    ),
    (
        "code",
        """import os
GAME = os.environ.get("JERICHO_NB_GAME", "castles")
TIMESTEPS = int(os.environ.get("JERICHO_NB_TIMESTEPS", "8192"))
DEALS = int(os.environ.get("JERICHO_NB_DEALS", "200"))""",
    ),
    (
        "code",
        """import contextlib
import io
import tempfile
from pathlib import Path

from experiments.train import make_config, train

folder = Path(tempfile.mkdtemp(prefix="jericho-nb-"))  # the run's files: checkpoint, logs, tournament
cfg = make_config(GAME, timesteps=TIMESTEPS, n_envs=2, net="64,64", snapshot_every=4096,
                  eval_every=4096, eval_deals=4, checkpoint_every=4096)  # the rest: the game's preset
said = io.StringIO()
with contextlib.redirect_stdout(said):  # what the trainer says, with the temporary folder named as such
    model_path = train(cfg, folder, quiet=True)
print(said.getvalue().replace(str(folder), "<run folder>").strip())""",
    ),
    (
        "code",
        """from experiments.evaluate import tournament

result = tournament(GAME, ["random", "greedy", f"ppo={model_path}"], deals=DEALS, out=str(folder / "tournament"),
                    plot=True)
display(result)  # the table the command prints (python -m experiments.evaluate), shown as a table
print(f"{result.games} games: {2 * DEALS} per pair of agents (each deal in both seat orders)")""",
    ),
    (
        "md",
        "The same scores as a heatmap (row agent's score against the column agent, over those games):",
    ),
    (
        "picture",
        """from IPython.display import Image
display(Image(filename=str(folder / "tournament" / "heatmap.png")))""",
    ),
    (
        "md",
        """## Your own agent in the table

Anything with `act(observation) -> action` plays: here a class that plays the lowest legal action.
On the command line the same agent plays from its file,
`python -m experiments.evaluate castles --agents lowest=mine.py:LowestCard greedy ppo`
([your-agent.md](../your-agent.md)).""",
    ),
    (
        "code",
        """import numpy as np


class LowestCard:
    name = "lowest"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


display(tournament(GAME, [LowestCard(), "greedy", f"ppo={model_path}"], deals=DEALS, out=str(folder / "mine")))""",
    ),
    ("md", 'The trained agent is an ordinary agent: `agents.make("ppo", GAME, path=...)`.'),
    (
        "code",
        """import agents
import jericho_env
import numpy as np

ppo = agents.make("ppo", GAME, path=str(model_path))
env = jericho_env.make(GAME)
env.reset(seed=5)
obs = env.observe(env.agent_selection)
a = ppo.act(obs)
print("ppo chooses", env.unwrapped.action_to_str(a), "- legal:", bool(obs["action_mask"][a]))""",
    ),
]
HERE = __import__("pathlib").Path(__file__).resolve().parent
nbf.write(nb(quick), HERE / "01_quickstart.ipynb")
nbf.write(nb(train), HERE / "02_train_and_evaluate.ipynb")
