from jericho_env.registry import register_game

try:
    from tests.toy_game import ToyRules
except ImportError:  # pragma: no cover
    from toy_game import ToyRules  # type: ignore[no-redef]

register_game("toy", ToyRules)
