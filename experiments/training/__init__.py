"""Training's library, by learner, beside what the three share.

Shared: ``presets`` (every learner's defaults, as data), ``run_folder`` (config.json, checkpoints, resume,
training.json), ``provenance`` (which commit and command made a run). By learner: ``ppo`` (``experiments.train``),
``exit`` (``experiments.exit``), ``dmc`` (``experiments.dmc``).
"""
