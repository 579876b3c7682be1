#!/usr/bin/env python3
"""Labels a million random positions with their exact scores and plots
the score histogram, with the `awari_egdb` module (README, "From Python").

    pip install numpy matplotlib ./python
    python3 examples/python/histogram.py DB [--count 1000000] [--out scores.png]

The positions: a built layer for each (every layer equally likely), its
seeds split into 12 pits at 11 random cut points, drawn again until the
board has a Goedel number; scored in one batch call. The plot shows, per
score, the share of positions; the shares won, drawn and lost for the
side to move are printed.
"""

import argparse
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from awari_egdb import Database  # noqa: E402


def random_boards(rng, layers, count):
    """`count` boards with a Goedel number: a layer for each, its seeds
    split into 12 pits at 11 random cut points."""
    seeds = rng.choice(layers, size=count)
    boards = np.zeros((count, 12), dtype=np.uint8)
    todo = np.arange(count)
    while todo.size:
        n = seeds[todo]
        cuts = np.sort(rng.integers(0, n[:, None] + 1, size=(todo.size, 11)), axis=1)
        edges = np.concatenate([np.zeros((todo.size, 1), int), cuts, n[:, None]], axis=1)
        pits = np.diff(edges, axis=1)
        boards[todo] = pits
        # A board whose opponent row (pits 6..11) is full has no Goedel
        # number: no move leads to it. Draw those again.
        todo = todo[(pits[:, 6:] > 0).all(axis=1)]
    return boards


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db", help="a folder of tables")
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--out", default="scores.png")
    a = ap.parse_args()
    db = Database(a.db)
    layers = [n for n in db.layers() if n != 47]
    rng = np.random.default_rng(2002)
    boards = random_boards(rng, np.array(layers), a.count)
    t = time.perf_counter()
    scores = db.scores(boards)
    took = time.perf_counter() - t
    print(
        f"{a.count} positions of layers {layers[0]}..={layers[-1]} ({db.rules}) scored in "
        f"{took:.2f} s ({a.count / took / 1e6:.2f} M/s)"
    )
    won, drawn, lost = (scores > 0).mean(), (scores == 0).mean(), (scores < 0).mean()
    print(f"won {won:.1%}  drawn {drawn:.1%}  lost {lost:.1%}")
    values, counts = np.unique(scores, return_counts=True)
    colours = ["#b3261e" if v < 0 else "#8a6d00" if v == 0 else "#1b7f3a" for v in values]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.bar(values, counts / a.count, color=colours)
    ax.set_xlabel("exact score for the side to move (seeds)")
    ax.set_ylabel("share of positions")
    ax.set_title(
        f"{a.count:,} random positions, layers {layers[0]}..={layers[-1]} ({db.rules})\n"
        f"won {won:.1%}, drawn {drawn:.1%}, lost {lost:.1%}"
    )
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print(f"plot written to {a.out}")


if __name__ == "__main__":
    main()
