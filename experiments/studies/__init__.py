"""One-off studies and benchmarks, out of the main path; each still runs as ``python -m experiments.studies.NAME``.

``grid_edge_study`` (where grid's greedy loses),
``search_bench`` and ``tournament_bench`` (search and tournament throughput), ``bench_training`` (training
throughput by setting), ``config_path`` (the path a training run's config takes). ``docs/benchmarks.md`` and
``docs/history/`` give what they measured.
"""
