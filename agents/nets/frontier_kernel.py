"""``grid-cells``' fixed frontier features as one compiled function (Numba), row by row.

``features`` computes a batch of grid observations' gathered frontier cells and their fifteen fixed features in
one pass per row, cheaper on self-play's small batches than the tensor definition it is tested against
(``tests/frontier_reference.py``; float64 here, float32 there). Without Numba it runs as plain Python.
"""

from __future__ import annotations

import numpy as np

from jericho_env.core.kernels import njit

NUM_FEATURES = 15


@njit(cache=True)
def features(  # type: ignore[no-untyped-def]
    obs, occ_at, base_at, planes_at, seen_at, hand_at, opp_hand_at, nb, distance, rank_points, max_cells
):
    """(cell indices (b, K) int64, valid (b, K) float32, features (b, K, 15) float32) of ``obs`` (b, size).

    ``occ_at``, ``base_at``, ``planes_at`` (the 17 suit and rank planes), ``hand_at`` and ``opp_hand_at``
    are the fields' first positions in a row; ``seen_at`` the first positions of the five card fields a
    card may be seen in; ``nb`` (cells + 1, 4) the neighbours (``cells`` for outside the window, whose
    row points to itself); ``distance`` per cell; ``rank_points`` per rank.
    """
    b = obs.shape[0]
    n = distance.shape[0]
    k_max = max_cells
    idx_out = np.zeros((b, k_max), dtype=np.int64)
    valid_out = np.zeros((b, k_max), dtype=np.float32)
    out = np.zeros((b, k_max, NUM_FEATURES), dtype=np.float32)
    occ = np.zeros(n + 1)
    face = np.zeros(n + 1)
    n_occ = np.zeros(n + 1)
    p_map = np.zeros(n + 1)
    unseen = np.zeros(52)
    fits = np.zeros(52)
    by_card = np.zeros(17)
    for row in range(b):
        x = obs[row]
        for c in range(n):
            occ[c] = x[occ_at + c]
            face[c] = occ[c] - x[base_at + c]
        for c in range(n + 1):
            t = 0.0
            for q in range(4):
                t += occ[nb[c, q]]
            n_occ[c] = t
        # the gathered cells: frontier cells by position, then the others by position (topk's order)
        k = 0
        for c in range(n):
            if occ[c] < 0.5 and n_occ[c] > 0.5 and k < k_max:
                idx_out[row, k] = c
                valid_out[row, k] = 1.0
                k += 1
        for c in range(n):
            if k >= k_max:
                break
            if not (occ[c] < 0.5 and n_occ[c] > 0.5):
                idx_out[row, k] = c
                k += 1
        n_unseen = 0.0
        for card in range(52):
            seen = 0.0
            for f in range(seen_at.shape[0]):
                seen += x[seen_at[f] + card]
            u = 1.0 - seen
            unseen[card] = u if u > 0.0 else 0.0
            n_unseen += unseen[card]
        if n_unseen < 1.0:
            n_unseen = 1.0
        opp_hand = float(round(x[opp_hand_at] * 5.0))
        for c in range(n + 1):
            p_map[c] = 0.0
        # first pass: everything but the second-order risks, which need every cell's p_opp
        for j in range(k_max):
            if valid_out[row, j] == 0.0:
                continue
            cell = idx_out[row, j]
            capture = 0.0
            exposed_sum = 0.0
            n_face = 0.0
            for r in range(17):
                by_card[r] = 0.0
            for q in range(4):
                m = nb[cell, q]
                if m >= n:
                    continue
                pts = 0.0
                for r in range(17):
                    v = x[planes_at + r * n + m]
                    by_card[r] += v
                    if r >= 4:
                        pts += v * rank_points[r - 4]
                fm = face[m]
                n_face += fm
                if n_occ[m] > 2.5 and n_occ[m] < 3.5:
                    capture += fm * pts
                if n_occ[m] > 1.5 and n_occ[m] < 2.5:
                    exposed_sum += fm * pts
            unseen_fit = 0.0
            own_fit = 0.0
            for s in range(4):
                for r in range(13):
                    card = s * 13 + r
                    fit = 1.0 if by_card[s] + by_card[4 + r] == n_face else 0.0
                    fits[card] = fit
                    unseen_fit += unseen[card] * fit
                    own_fit += x[hand_at + card] * fit
            share = unseen_fit / n_unseen
            miss = 1.0 - share
            miss = 0.0 if miss < 0.0 else (1.0 if miss > 1.0 else miss)
            p_opp = 1.0 - miss**opp_hand
            p_map[cell] = p_opp
            covered = n_occ[cell]
            f = out[row, j]
            f[0] = capture
            f[1] = 1.0 if covered > 3.5 else 0.0
            f[2] = exposed_sum
            f[4] = 1.0 if covered > 2.5 and covered < 3.5 else 0.0
            f[6] = share
            f[7] = own_fit / 5.0
            f[8] = p_opp
            f[9] = p_opp * capture
            f[10] = capture if own_fit > 0.5 else 0.0
            f[11] = covered / 4.0
            f[12] = distance[cell]
            f[13] = 1.0
            f[14] = n_face / 4.0
        # second pass: the opponent's chance at what a placement exposes, and at its own open side
        for j in range(k_max):
            if valid_out[row, j] == 0.0:
                continue
            cell = idx_out[row, j]
            exposed_risk = 0.0
            own_risk = 0.0
            for q in range(4):
                m = nb[cell, q]
                if m < n and n_occ[m] > 1.5 and n_occ[m] < 2.5 and face[m] != 0.0:
                    pts = 0.0
                    for r in range(13):
                        pts += x[planes_at + (4 + r) * n + m] * rank_points[r]
                    best = 0.0
                    for qq in range(4):
                        m2 = nb[m, qq]
                        if m2 != cell and p_map[m2] > best:
                            best = p_map[m2]
                    exposed_risk += face[m] * pts * best
                open_risk = p_map[m] * (1.0 - occ[m])
                if open_risk > own_risk:
                    own_risk = open_risk
            f = out[row, j]
            f[3] = exposed_risk
            f[5] = own_risk if f[4] > 0.0 else 0.0
    return idx_out, valid_out, out
