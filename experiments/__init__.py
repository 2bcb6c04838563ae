"""The commands (``python -m experiments.NAME``) and their library.

The modules at this level are the commands (``train``, ``evaluate``, ``bench``, ``exit``, ``dmc``, ``sweep``,
``zoo``, ``leaderboard``, ``teams``, ``curves``, ``replays``) and ``cli``, their shared flag parsing. Their library
lives in ``experiments.play`` (playing games: tournaments, deals, backends, reports) and
``experiments.training`` (the model, the pool, self-play, the run folder, presets, provenance, expert
iteration, Deep Monte-Carlo). ``docs/architecture.md`` draws it.
"""
