"""Playing games: tournaments (seat-swapped deals, intervals, ratings), their deals, backends and reports.

``tournament`` (pairs of agents over paired deals), ``batched_games`` (a pair's games on the batched
engine), ``deals`` (which deal and seat arrangement each game plays), ``backends`` (local processes or Ray),
``report`` (tables, ratings, plots, run folders). The commands that use them: ``experiments.evaluate``,
``experiments.teams``, ``experiments.leaderboard``, and the final table of ``experiments.train``.
"""
