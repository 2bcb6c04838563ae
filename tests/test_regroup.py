"""The regroup (issue 47): old module paths still import, as the new modules, and the config's path stays short."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from agents._moved import AGENTS_MOVED
from experiments import EXPERIMENTS_MOVED
from experiments.studies import config_path

MOVED = {**AGENTS_MOVED, **EXPERIMENTS_MOVED}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED.items()))
def test_an_old_module_path_imports_the_new_module_itself_with_a_warning(old: str, new: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)
    assert module.__spec__ is not None and module.__spec__.name == new, "the new module keeps its own spec"


def test_from_an_old_path_import_a_name_gives_the_new_modules_object() -> None:
    sys.modules.pop("agents.ismcts", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from agents.ismcts import ISMCTSAgent as Old
        from experiments.checkpoints import RunFolder as OldRunFolder
    from agents.search.ismcts import ISMCTSAgent
    from experiments.training.run_folder import RunFolder

    assert Old is ISMCTSAgent and OldRunFolder is RunFolder


def test_the_new_paths_of_the_table_exist_and_no_old_file_is_left() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for old, new in MOVED.items():
        assert importlib.util.find_spec(new) is not None, new
        assert not (root / (old.replace(".", "/") + ".py")).exists(), f"{old} is still a file"


def test_an_unknown_name_is_not_answered_by_the_old_paths_finder() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("agents.no_such_module")


@pytest.mark.slow
def test_the_config_of_a_training_run_stays_on_a_short_path() -> None:
    """Bounds from the set-up path measured after the regroup: a change that sends the config wandering fails."""
    path = config_path.traced_train("castles", learn=False).without(config_path.ENGINE_INTERNALS)
    entered = path.entered
    assert entered["experiments/train.py"] >= 1 and entered["experiments/training/ppo/config.py"] >= 1, path.summary()
    # 21: the three learners' shared config idiom (experiments/training/config.py) beside PPO's own config
    assert len(path.files) <= 21 and path.climbs <= 5, path.summary()
    assert entered["agents/prior.py"] <= 2 and entered["agents/checkpoint.py"] <= 2, entered
    assert entered["experiments/training/run_folder.py"] <= 3, entered
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
    from agents._moved import PICKLED

    for old, new in PICKLED.items():
        sys.modules.pop(old, None)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert importlib.import_module(old) is importlib.import_module(new)
    from agents.networks import GridConvPolicy, PriorMlpPolicy  # what pickled checkpoints look up

    from agents.nets.common import PriorMlpPolicy as Mlp
    from agents.nets.grid import GridConvPolicy as Conv

    assert (GridConvPolicy, PriorMlpPolicy) == (Conv, Mlp)
