"""The module paths checkpoints name still import, as the new modules, and the config's path stays short."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from tests import config_path


@pytest.mark.parametrize("name", ["agents.no_such_module", "agents.ismcts", "experiments.tournament"])
def test_a_name_checkpoints_do_not_use_is_not_answered_by_the_pickled_paths_finder(name: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(name)  # the regroup's old paths went after their release


@pytest.mark.slow
def test_the_config_of_a_training_run_stays_on_a_short_path() -> None:
    """Bounds from the set-up path measured after the regroup: a change that sends the config wandering fails."""
    path = config_path.traced_train("castles", learn=False).without(config_path.ENGINE_INTERNALS)
    entered = path.entered
    assert entered["experiments/train.py"] >= 1 and entered["experiments/training/ppo/config.py"] >= 1, path.summary()
    # 21: the three learners' shared config idiom (experiments/training/config.py) beside PPO's own config;
    # 23: the pool's specs parsed where every agent spec is (jericho_env/user_agents.py: user code or not), and
    # the one atomic file writer (experiments/play/report.py)
    assert len(path.files) <= 23 and path.climbs <= 7, path.summary()
    assert entered["agents/prior.py"] <= 2 and entered["agents/checkpoint.py"] <= 2, entered
    assert entered["experiments/training/run_folder.py"] <= 4, entered  # 4: its writes go through report.write_file
    assert not path.calls_up, path.calls_up


def test_the_path_counts_stays_returns_and_climbs() -> None:
    path = config_path.ConfigPath(
        [("experiments/a.py", ["f"]), ("agents/b.py", ["g"]), ("experiments/a.py", ["h"]), ("jericho_env/c.py", ["i"])]
    )
    assert path.files == ["experiments/a.py", "agents/b.py", "jericho_env/c.py"]
    assert path.entered["experiments/a.py"] == 2 and path.returns == 1 and path.climbs == 1
    shorter = path.without(("agents/",))
    assert shorter.stays == [("experiments/a.py", ["f", "h"]), ("jericho_env/c.py", ["i"])] and shorter.climbs == 0


def test_the_paths_checkpoints_name_import_their_new_modules_without_a_warning() -> None:
    from agents._pickled_paths import PICKLED

    for old, new in PICKLED.items():
        sys.modules.pop(old, None)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert importlib.import_module(old) is importlib.import_module(new)
    from agents.networks import GridConvPolicy, PriorMlpPolicy  # what pickled checkpoints look up

    from agents.nets.common import PriorMlpPolicy as Mlp
    from agents.nets.grid import GridConvPolicy as Conv

    assert (GridConvPolicy, PriorMlpPolicy) == (Conv, Mlp)
