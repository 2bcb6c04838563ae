"""``agents.nets.frontier_kernel`` computes ``grid-cells``' frontier cells and features as the tensor reference does."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.nets import frontier_kernel
from agents.nets.grid_cells import FrontierFeatures, GridCellsNet
from jericho_env.registry import make_rules
from tests.frontier_reference import FrontierReference
from tests.test_grid_cells import positions

Outputs = tuple[torch.Tensor, ...]


def both(board_size: int, max_cells: int, obs: torch.Tensor) -> tuple[Outputs, Outputs]:
    """(the kernel's output, the reference's output) on ``obs``."""
    layout = make_rules("grid", board_size=board_size).layout
    rows = np.ascontiguousarray(obs.numpy())
    features = FrontierFeatures(board_size, layout, max_cells)
    kernel = tuple(torch.from_numpy(a) for a in frontier_kernel.features(rows, *features.kernel_args))
    with torch.no_grad():
        return kernel, FrontierReference(board_size, layout, max_cells)(obs)


@pytest.mark.parametrize(("board_size", "max_cells"), [(21, 64), (9, 12)])
def test_the_kernel_gathers_the_same_cells_with_the_same_features(board_size: int, max_cells: int) -> None:
    # 9x9 with 12 cells: boards whose frontier is longer than the gathered cells (the first by position)
    sample = positions(400, seed=board_size, board_size=board_size)
    obs = torch.as_tensor(np.stack([o for o, _ in sample]))
    (idx, valid, x), (ref_idx, ref_valid, ref_x) = both(board_size, max_cells, obs)
    assert torch.equal(idx, ref_idx) and torch.equal(valid, ref_valid)
    assert torch.allclose(x, ref_x, atol=1e-5, rtol=0)
    for f in range(x.shape[2]):  # every feature is exercised: nonzero somewhere
        assert (ref_x[:, :, f] != 0).any(), f
    if max_cells == 12:
        assert (valid.sum(dim=1) == 12).any()  # a frontier beyond the gathered cells did occur


def test_the_kernel_runs_as_plain_python_with_the_same_results() -> None:
    # where Numba is absent the same function runs uncompiled: check that arithmetic too, on a few rows
    sample = positions(12, seed=5)
    obs = torch.as_tensor(np.stack([o for o, _ in sample]))
    features = FrontierFeatures(21, make_rules("grid").layout, 64)
    plain = getattr(frontier_kernel.features, "py_func", frontier_kernel.features)
    idx, valid, x = (torch.from_numpy(a) for a in plain(np.ascontiguousarray(obs.numpy()), *features.kernel_args))
    (ref_idx, ref_valid, ref_x) = both(21, 64, obs)[1]
    assert torch.equal(idx, ref_idx) and torch.equal(valid, ref_valid)
    assert torch.allclose(x, ref_x, atol=1e-5, rtol=0)


def test_the_network_gives_the_same_logits_and_values_either_way() -> None:
    sample = positions(64, seed=11)
    obs = torch.as_tensor(np.stack([o for o, _ in sample]))
    torch.manual_seed(0)
    net = GridCellsNet({})
    with torch.no_grad():
        fast = net.forward_compact(obs)
        net.frontier = FrontierReference(net.side, make_rules("grid").layout, 64)
        slow = net.forward_compact(obs)
    assert torch.equal(fast[1], slow[1])  # the same action numbers
    assert torch.allclose(fast[0], slow[0], atol=1e-5) and torch.allclose(fast[2], slow[2], atol=1e-5)
