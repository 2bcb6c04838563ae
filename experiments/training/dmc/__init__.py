"""Deep Monte-Carlo's library (``experiments.dmc``): the learner, its actors and replay buffer, Ray's actors."""
