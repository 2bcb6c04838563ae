"""The commands (``python -m experiments.NAME``) and their library.

The modules at this level are the commands (``train``, ``evaluate``, ``bench``, ``exit``, ``sweep``, ``zoo``,
``leaderboard``, ``teams``, ``curves``, ``replays``) and ``cli``, their shared flag parsing. Their library
lives in ``experiments.play`` (playing games: tournaments, deals, backends, reports) and
``experiments.training`` (the model, the pool, self-play, the run folder, presets, provenance, expert
iteration); one-off studies and benchmarks in ``experiments.studies``. ``docs/architecture.md`` draws it.
"""

from agents._moved import keep_old_paths

# the old module paths of the regroup (2026-12-04), importable for one release (agents._moved)
EXPERIMENTS_MOVED: dict[str, str] = {
    "experiments.tournament": "experiments.play.tournament",
    "experiments.batched_games": "experiments.play.batched_games",
    "experiments.deals": "experiments.play.deals",
    "experiments.backends": "experiments.play.backends",
    "experiments.report": "experiments.play.report",
    "experiments.model": "experiments.training.ppo.model",
    "experiments.pool": "experiments.training.ppo.pool",
    "experiments.selfplay": "experiments.training.ppo.selfplay",
    "experiments.callbacks": "experiments.training.ppo.callbacks",
    "experiments.checkpoints": "experiments.training.run_folder",
    "experiments.presets": "experiments.training.presets",
    "experiments.provenance": "experiments.training.provenance",
    "experiments.exit_play": "experiments.training.exit.play",
    "experiments.exit_learn": "experiments.training.exit.learn",
}
keep_old_paths(EXPERIMENTS_MOVED)
