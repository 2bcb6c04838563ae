from __future__ import annotations

from typing import Any

from jericho_env.registry import register_game

try:
    from tests.toy_game import ToyRules
except ImportError:  # pragma: no cover
    from toy_game import ToyRules  # type: ignore[no-redef]

register_game("toy", ToyRules)


# Tests of the RL libraries with their own venvs (markers requires_<lib>, deselected by the default run
# through pyproject's addopts): say how many were left out and which command runs them, never silently.
_ECOSYSTEM = ("rllib", "torchrl", "tianshou", "agilerl")
_deselected: dict[str, int] = {}


def pytest_deselected(items: list[Any]) -> None:
    for item in items:
        for lib in _ECOSYSTEM:
            if item.get_closest_marker(f"requires_{lib}") is not None:
                _deselected[lib] = _deselected.get(lib, 0) + 1


def pytest_terminal_summary(terminalreporter: Any, config: Any) -> None:
    # Under pytest-xdist the workers deselect, so the count is known only in a run without -n.
    expr = config.getoption("markexpr") or ""
    for lib in _ECOSYSTEM:
        if f"not requires_{lib}" in expr:
            n = _deselected.get(lib)
            terminalreporter.write_line(
                f"deselected {f'{n} ' if n else ''}requires_{lib} tests (-m {expr!r}): "
                f"run them with `bash scripts/test-ecosystem.sh {lib}`"
            )
