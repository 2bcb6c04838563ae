"""What knowing the opponent's hand is worth to a grid dmc network: ``python -m experiments.studies.grid_belief``.

Grid's dmc network reads the unseen cards (not in its hand, the capture piles, on the table or discarded) in two
places: the frontier features (``agents.nets.frontier_kernel``: the chance that the opponent fits a cell) and
greedy's scores, its prior (``agents.greedy.grid``: the danger a placement leaves, from how many unseen
cards fit each cell). Both treat the opponent's hand as a uniform draw from the unseen cards. This study narrows
that set for the network's own seat, without retraining it: a **candidate set** of unseen cards is kept unseen
and every other unseen card is shown to those two readers as discarded (the network's state, ``S``, keeps the
fair observation). ``--channels`` says which readers get the narrowed view: ``k`` the frontier features,
``h`` greedy's prior (``kh`` both, the default).

Candidate sets (``--candidates``), each of ``h + --extra`` cards at most (``h``: the opponent's hand size, which
the observation shows):

* ``fair``: every unseen card (the network as it plays);
* ``oracle``: the opponent's true hand and ``--extra`` other unseen cards drawn at random. **It reads the hidden
  state on purpose**: a bound on what inference could buy, not an agent; ``--extra`` sets how sharp the
  knowledge is (0: the hand itself);
* ``learned``: the ``h + --extra`` unseen cards a belief network ranks most likely to be in the opponent's hand.
  The belief network (an MLP over the seat's version-1 observation without the table planes; what the seat may
  see) is trained first, by binary cross-entropy on the true hands, from ``--belief-deals`` deals of the network
  against the opponent (other deals than the games'); its held-out loss and ranking quality are printed.
  ``--belief-history`` adds what the opponent's own decisions showed (``Declines``: the cards that would have
  captured where it did not capture).

``--draw-pile LO:HI`` hands the narrowed view over only while the draw pile holds LO to HI-1 cards (a phase of
the game); elsewhere the network plays fair.

The games run on the batched engine (observation version 1 when a belief is learned or the network reads it;
each side is handed its own version's leading fields), each deal in both seats; the score is the network's wins
plus half its draws, with a 95% Wilson interval. Figures compare with ``experiments.studies.versus_versions`` on
the same ``--seed`` (``--candidates fair --extra 52`` plays its games).

Examples:
    python -m experiments.studies.grid_belief agents/zoo/grid-dmc.zip ppo --candidates oracle --extra 0
    python -m experiments.studies.grid_belief agents/zoo/grid-dmc.zip ppo --candidates learned --extra 20
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from experiments.cli import cli_parser, nonnegative_int, positive_int, run_cli, seed_int
from jericho_env.core.cards import NUM_CARDS

CANDIDATES = ("fair", "oracle", "learned")
CHANNELS = ("k", "h", "kh")
SEEN_FIELDS = ("hand", "own_captured", "opp_captured", "table_cards", "discard")
TABLE_FIELDS = ("table_occupied", "table_base", "table_suit", "table_rank")


class Views:
    """The observation fields this study reads and writes, for grid under ``options`` (observation version 1)."""

    def __init__(self, options: dict[str, Any]) -> None:
        from jericho_env.registry import make_rules

        rules = make_rules("grid", **{**options, "obs_version": 1})
        sl = rules.layout.slices
        self.size = rules.info.observation_size
        self.seen = [sl[f] for f in SEEN_FIELDS]
        self.discard = sl["discard"]
        self.fits_capture = sl["fits_capture"]
        self.opp_hand = sl["opp_hand_size"].start
        table = [sl[f] for f in TABLE_FIELDS]
        lo, hi = min(s.start for s in table), max(s.stop for s in table)
        if hi - lo != sum(s.stop - s.start for s in table):
            raise ValueError("grid's table planes are not one run of the observation")
        self.keep = np.r_[0:lo, hi : self.size]

    def unseen(self, obs: np.ndarray) -> np.ndarray:
        """(B, 52) bool: the cards each row's seat has not seen."""
        return sum(obs[:, s] for s in self.seen) < 0.5  # type: ignore[no-any-return]

    def hand_sizes(self, obs: np.ndarray) -> np.ndarray:
        """(B,) int: the opponent's hand size each row shows."""
        from jericho_env.games.grid.state import HAND_SIZE

        return np.rint(obs[:, self.opp_hand] * HAND_SIZE).astype(np.int64)  # type: ignore[no-any-return]

    def compact(self, obs: np.ndarray) -> np.ndarray:
        """The belief network's input: the version-1 row without its table planes."""
        return np.ascontiguousarray(obs[:, self.keep], dtype=np.float32)

    def narrowed(self, obs: np.ndarray, keep: np.ndarray) -> np.ndarray:
        """A copy of ``obs`` in which every unseen card outside ``keep`` (B, 52 bool) is marked discarded."""
        out = np.array(obs, dtype=np.float32)
        hide = self.unseen(obs) & ~keep
        out[:, self.discard] = np.maximum(out[:, self.discard], hide.astype(np.float32))
        return out


def opponent_hands(states: np.ndarray, rows: np.ndarray, movers: np.ndarray) -> np.ndarray:
    """(len(rows), 52) bool: the hand of the opponent of ``movers`` in the batched grid ``states`` (hidden)."""
    out = np.zeros((len(rows), NUM_CARDS), dtype=bool)
    hands, lengths = states["hands"][rows], states["hand_len"][rows]
    for i, mover in enumerate(np.asarray(movers).tolist()):
        out[i, hands[i, 1 - mover, : lengths[i, 1 - mover]]] = True
    return out


def top_candidates(key: np.ndarray, unseen: np.ndarray, count: np.ndarray) -> np.ndarray:
    """(B, 52) bool: per row the ``count`` unseen cards of highest ``key`` (all unseen cards where fewer)."""
    ranked = np.argsort(-np.where(unseen, key, -np.inf), axis=1, kind="stable")
    take = np.minimum(count, unseen.sum(axis=1))
    out = np.zeros(unseen.shape, dtype=bool)
    rows = np.repeat(np.arange(len(key)), take)
    cols = ranked[np.arange(unseen.shape[1])[None, :] < take[:, None]]
    out[rows, cols] = True
    return out


class Declines:
    """What the opponent's own decisions show of its hand, from public facts only (``--belief-history``).

    At each decision of the opponent where some placement would capture (the cards that fit such a cell:
    version 1's ``fits_capture``, a function of the table), whether it captured (its capture pile grew); where it
    did not, those cards are its **declined** set (an opponent that always captures held none of them). Kept per
    game: the latest declined set, the union of every declined set, and the cards it has drawn since each (the
    draw pile's shrinking during its moves). ``features(rows)``: the two sets, the two draw counts (capped, scaled)
    and whether it has declined yet, as the belief network's extra inputs.
    """

    WIDTH = 2 * NUM_CARDS + 3

    def __init__(self, views: Views) -> None:
        self.views = views
        self.start(0, 0)

    def start(self, deals: int, seat: int) -> None:
        self.other = 1 - seat
        self.latest = np.zeros((deals, NUM_CARDS), bool)
        self.union = np.zeros((deals, NUM_CARDS), bool)
        self.since_latest = np.zeros(deals, np.int64)
        self.since_first = np.zeros(deals, np.int64)
        self.declined = np.zeros(deals, bool)
        self.pending: tuple[np.ndarray, ...] = ()

    def before(self, obs: np.ndarray, states: np.ndarray, rows: np.ndarray) -> None:
        fits = obs[rows, self.views.fits_capture] > 0.5
        self.pending = (fits, states["cap_len"][rows, self.other].copy(), states["draw_len"][rows].copy())

    def after(self, states: np.ndarray, rows: np.ndarray) -> None:
        fits, captured, pile = self.pending
        drawn = np.maximum(pile - states["draw_len"][rows], 0)
        declined = fits.any(axis=1) & (states["cap_len"][rows, self.other] <= captured)
        self.since_latest[rows] += drawn
        self.since_first[rows] += drawn
        now = rows[declined]
        self.latest[now] = fits[declined]
        self.since_latest[now] = drawn[declined]
        first = now[~self.declined[now]]
        self.since_first[first] = drawn[declined][~self.declined[now]]
        self.union[now] |= fits[declined]
        self.declined[now] = True

    def features(self, rows: np.ndarray) -> np.ndarray:
        counts = [np.minimum(self.since_latest[rows], 5) / 5, np.minimum(self.since_first[rows], 10) / 10]
        return np.concatenate(
            [self.latest[rows], self.union[rows], np.stack([*counts, self.declined[rows]], axis=1)], axis=1
        ).astype(np.float32)


def belief_network(inputs: int) -> Any:
    """The belief MLP: the compact row -> 52 logits (the chance of each card being in the opponent's hand)."""
    from torch import nn

    return nn.Sequential(nn.Linear(inputs, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, NUM_CARDS))


def belief_probabilities(net: Any, rows: np.ndarray) -> np.ndarray:
    """(B, 52) the belief network's probabilities for compact ``rows``."""
    import torch

    with torch.no_grad():
        return torch.sigmoid(net(torch.as_tensor(rows))).numpy()  # type: ignore[no-any-return]


def ranking_quality(p: np.ndarray, hands: np.ndarray, unseen: np.ndarray) -> dict[str, float]:
    """Mean over rows of the AUC of ``p`` (true hand cards against the other unseen cards), and the share of the
    hand among each row's top-``h`` unseen cards (and that share for a uniform guess)."""
    aucs, tops, uniform = [], [], []
    for i in range(len(p)):
        pos, neg = p[i, hands[i] & unseen[i]], p[i, ~hands[i] & unseen[i]]
        if len(pos) == 0 or len(neg) == 0:
            continue
        aucs.append(float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()))
        top = top_candidates(p[i : i + 1], unseen[i : i + 1], np.array([len(pos)]))[0]
        tops.append(float((top & hands[i]).sum() / len(pos)))
        uniform.append(len(pos) / (len(pos) + len(neg)))
    return {"auc": float(np.mean(aucs)), "top_h_share": float(np.mean(tops)), "uniform_share": float(np.mean(uniform))}


class Match:
    """The network at ``path`` against ``opponent`` on the batched engine, the network's seat handed narrowed views."""

    def __init__(self, path: str, opponent: str, seed: int, options: dict[str, Any]) -> None:
        from agents.dmc import DmcAgent, read_dmc_meta
        from experiments.training.dmc_actors import fixed_policy, leading_size
        from jericho_env.registry import make_rules

        if "+" in str(path):
            raise ValueError(f"{path!r}: this study plays one network, not an ensemble")
        mine = int(read_dmc_meta(path)["observation_version"])
        self.options = {**options, "obs_version": max(1, mine)}
        self.views = Views(options)
        self.plan = DmcAgent("grid", path=path, **{**options, "obs_version": mine}).plan
        if not hasattr(self.plan, "pair_values"):
            raise ValueError(f"{path!r} is not a grid pair network")
        size = make_rules("grid", **{**options, "obs_version": mine}).info.observation_size
        self.size = size if mine >= 1 else leading_size("grid", self.options, mine)
        self.other = fixed_policy(opponent, "grid", seed, self.options)

    def play(self, deals: int, seed: int, choose: Any, watch: Any = None) -> dict[str, Any]:
        """Each deal in both seats; ``choose(obs, masks, states, rows, movers)`` picks the network's actions;
        ``watch`` sees the opponent's decisions (``versus_versions.seat_swapped``)."""
        from experiments.studies.versus_versions import seat_swapped

        return seat_swapped("grid", self.options, deals, seed, self.other, choose, watch)  # type: ignore[no-any-return]

    def best(self, obs: np.ndarray, masks: np.ndarray, keep: np.ndarray | None, channels: str) -> np.ndarray:
        """The network's moves with the unseen cards outside ``keep`` hidden from ``channels``' readers."""
        from agents.nets.dmc import best_pairs

        own = np.ascontiguousarray(obs[:, : self.size])
        narrow = own if keep is None else np.ascontiguousarray(self.views.narrowed(obs, keep)[:, : self.size])
        rows, acts, q = self.plan.pair_values(
            own, masks, narrow if "k" in channels else None, narrow if "h" in channels else None
        )
        return best_pairs(rows, acts, q, len(masks))[0]  # type: ignore[no-any-return]


def belief_inputs(views: Views, obs: np.ndarray, declines: Declines | None, rows: np.ndarray) -> np.ndarray:
    """The belief network's input for the seat's rows ``obs`` (games ``rows``): the compact row, and the
    opponent's declined captures where ``declines`` is kept."""
    x = views.compact(obs)
    return x if declines is None else np.concatenate([x, declines.features(rows)], axis=1)


def fit_belief(match: Match, deals: int, seed: int, epochs: int, history: bool = False) -> tuple[Any, dict[str, Any]]:
    """A belief network trained on the network's decisions in ``deals`` deals (each in both seats) against the
    opponent (with ``history``, the opponent's declined captures among its inputs: ``Declines``); the rows of a
    tenth of the games held out for the figures returned."""
    import torch
    from torch import nn

    views = match.views
    declines = Declines(views) if history else None
    rows: list[np.ndarray] = []
    hands: list[np.ndarray] = []
    unseens: list[np.ndarray] = []
    games: list[np.ndarray] = []
    started = time.time()

    def record(obs: np.ndarray, masks: np.ndarray, states: np.ndarray, mine: np.ndarray, movers: np.ndarray) -> Any:
        rows.append(belief_inputs(views, obs, declines, mine))
        unseens.append(views.unseen(obs))
        hands.append(opponent_hands(states, mine, movers))
        games.append(movers * deals + mine)  # the tested seat and the deal: one number per game
        return match.best(obs, masks, None, "")

    match.play(deals, seed, record, declines)
    x, y = np.concatenate(rows), np.concatenate(hands)
    unseen = np.concatenate(unseens)  # the unseen cards: the only ones that may be in the hand
    rng = np.random.default_rng(seed)
    held_out = rng.permutation(2 * deals)[: max(1, (2 * deals) // 10)]  # whole games: their rows are alike
    is_held = np.isin(np.concatenate(games), held_out)
    held, train = np.flatnonzero(is_held), np.flatnonzero(~is_held)
    if len(held) == 0 or len(train) == 0:
        raise ValueError(
            f"--belief-deals {deals}: the held-out or the training games hold no decision; give more deals"
        )
    torch.manual_seed(int(rng.integers(2**31)))
    net = belief_network(x.shape[1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    tx, ty, tu = (
        torch.as_tensor(x),
        torch.as_tensor(y, dtype=torch.float32),
        torch.as_tensor(unseen, dtype=torch.float32),
    )

    def loss(idx: np.ndarray) -> Any:
        i = torch.as_tensor(idx)
        per = nn.functional.binary_cross_entropy_with_logits(net(tx[i]), ty[i], reduction="none")
        return (per * tu[i]).sum() / tu[i].sum().clamp(min=1.0)

    for _ in range(epochs):
        net.train()
        shuffled = rng.permutation(train)
        for k in range(0, len(shuffled), 512):
            opt.zero_grad()
            loss(shuffled[k : k + 512]).backward()
            opt.step()
    net.eval()
    with torch.no_grad():
        held_loss = float(loss(held))
    p = belief_probabilities(net, x[held])
    quality = ranking_quality(p, y[held], unseen[held])
    h = y[held].sum(axis=1, keepdims=True)
    base = np.clip(h / np.maximum(unseen[held].sum(axis=1, keepdims=True), 1), 1e-4, 1 - 1e-4)
    bce = -(y[held] * np.log(base) + (1 - y[held]) * np.log(1 - base))
    uniform = float((bce * unseen[held]).sum() / max(unseen[held].sum(), 1))
    report = {"rows": len(x), "held_out_bce": held_loss, "uniform_bce": uniform, **quality,
              "seconds": round(time.time() - started, 1)}  # fmt: skip
    return net, report


def run(
    path: str,
    opponent: str,
    candidates: str,
    extra: int,
    channels: str,
    deals: int,
    seed: int,
    belief_deals: int = 2000,
    belief_epochs: int = 2,
    options: dict[str, Any] | None = None,
    belief_seed: int | None = None,
    belief_history: bool = False,
    draw_pile: tuple[int, int] = (0, 99),
) -> dict[str, Any]:
    """The study's figures (module docstring): the score against ``opponent``, and the belief's where learned
    (``belief_history``: the opponent's declined captures among the belief's inputs, ``Declines``). The
    narrowed view is handed over only where the draw pile holds ``draw_pile[0]`` to ``draw_pile[1] - 1`` cards."""
    lo, hi = draw_pile
    if not 0 <= lo < hi:
        raise ValueError(f"draw_pile is LO:HI with 0 <= LO < HI, got {lo}:{hi}")
    if candidates not in CANDIDATES:
        raise ValueError(f"candidates must be one of {', '.join(CANDIDATES)}, got {candidates!r}")
    if channels not in CHANNELS:
        raise ValueError(f"channels must be one of {', '.join(CHANNELS)}, got {channels!r}")
    match = Match(path, opponent, seed, dict(options or {}))
    views = match.views
    out: dict[str, Any] = {"candidates": candidates, "extra": extra, "channels": channels}
    net = None
    declines = Declines(views) if candidates == "learned" and belief_history else None
    if candidates == "learned":
        # the belief's own deals and initial weights: from --belief-seed, or a seed apart from the games'
        net, out["belief"] = fit_belief(
            match, belief_deals, seed + 1_000_003 if belief_seed is None else belief_seed, belief_epochs,
            belief_history,
        )  # fmt: skip
    rng = np.random.default_rng([seed, extra])

    def choose(obs: np.ndarray, masks: np.ndarray, states: np.ndarray, mine: np.ndarray, movers: np.ndarray) -> Any:
        if candidates == "fair":
            return match.best(obs, masks, None, channels)
        pile = states["draw_len"][mine]
        phase = (pile >= lo) & (pile < hi)
        unseen, count = views.unseen(obs), views.hand_sizes(obs) + extra
        if candidates == "oracle":  # the true hand first, then the others in a random order
            key = opponent_hands(states, mine, movers) + rng.random(unseen.shape)
        else:
            key = belief_probabilities(net, belief_inputs(views, obs, declines, mine))
        keep = top_candidates(key, unseen, count) | ~phase[:, None]  # outside the phase: every unseen card
        return match.best(obs, masks, keep, channels)

    out.update(match.play(deals, seed, choose, declines))
    return out


def pile_range(text: str) -> tuple[int, int]:
    """``LO:HI`` (whole numbers, 0 <= LO < HI) for argparse."""
    lo, sep, hi = text.partition(":")
    try:
        pair = (int(lo), int(hi))
    except ValueError:
        pair = (-1, -1)
    if not sep or not 0 <= pair[0] < pair[1]:
        raise argparse.ArgumentTypeError(f"expected LO:HI, whole numbers with 0 <= LO < HI, got {text!r}")
    return pair


def main(argv: list[str] | None = None) -> int:
    parser = cli_parser(__name__, __doc__)
    parser.add_argument("network", help="a grid dmc checkpoint (one network)")
    parser.add_argument("opponent", help="a registered agent that reads the observation (ppo, greedy, ...)")
    parser.add_argument("--candidates", choices=CANDIDATES, default="oracle", help="the candidate set (oracle)")
    parser.add_argument("--extra", type=nonnegative_int, default=0, help="cards beyond the hand's size kept (0)")
    parser.add_argument("--channels", choices=CHANNELS, default="kh", help="who reads the narrowed view (kh)")
    parser.add_argument("--deals", type=positive_int, default=500, help="deals, each in both seats (500)")
    parser.add_argument("--seed", type=seed_int, default=11, help="seed of the deals and the opponent (11)")
    parser.add_argument("--belief-deals", type=positive_int, default=2000, help="deals the belief learns from (2000)")
    parser.add_argument("--belief-epochs", type=positive_int, default=2, help="passes over the belief's rows (2)")
    parser.add_argument(
        "--belief-seed", type=seed_int, default=None, help="seed of the belief's deals and weights (from --seed)"
    )
    parser.add_argument(
        "--belief-history", action="store_true", help="the opponent's declined captures among the belief's inputs"
    )
    parser.add_argument(
        "--draw-pile", type=pile_range, default=(0, 99), help="narrow only where the draw pile holds LO..HI-1 cards"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)

    from experiments.studies.versus_versions import score_text

    def body() -> None:
        r = run(args.network, args.opponent, args.candidates, args.extra, args.channels, args.deals, args.seed,
                args.belief_deals, args.belief_epochs, belief_seed=args.belief_seed,
                belief_history=args.belief_history, draw_pile=args.draw_pile)  # fmt: skip
        if args.json:
            print(json.dumps(r))
            return
        if "belief" in r:
            b = r["belief"]
            print(f"belief: {b['rows']} rows in {b['seconds']} s; held-out BCE {b['held_out_bce']:.4f} (uniform "
                  f"{b['uniform_bce']:.4f}); AUC {b['auc']:.3f}; top-h share {b['top_h_share']:.3f} (uniform "
                  f"{b['uniform_share']:.3f})")  # fmt: skip
        print(f"{args.network} vs {args.opponent}, candidates {args.candidates} (+{args.extra}), channels "
              f"{args.channels}: {score_text(r)}, seed {args.seed}")  # fmt: skip

    return run_cli(parser, body)


if __name__ == "__main__":
    raise SystemExit(main())
