"""Training's library: the model, the opponent pool, self-play, the run folder, presets, provenance, expert iteration.

``presets`` (every default, as data; the config resolved and checked once), ``model`` (MaskablePPO made,
resumed and its rollouts pipelined), ``pool`` (the opponents), ``selfplay`` (the vec env and evaluations),
``callbacks`` (progress, periodic work), ``run_folder`` (checkpoints, snapshots, resume, training.json),
``provenance`` (which commit and command made a run), ``exit_play`` / ``exit_learn`` (expert iteration).
"""
