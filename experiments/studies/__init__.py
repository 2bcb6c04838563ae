"""Studies out of the main path, each run as ``python -m experiments.studies.NAME``: ``config_path`` (the path a
training run's config takes through the source files).

One-off studies leave once their findings are written down (``docs/history/retired.md`` names the commit that last
had each).
"""
