"""Expert iteration's library (``experiments.exit``): the search's self-play games and the network's update."""
