"""PPO's library (``experiments.train``): the config, the model, the opponent pool, the self-play games, callbacks."""
