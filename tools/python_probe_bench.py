#!/usr/bin/env python3
"""The Python module's probe rates on one layer (issue 36's targets).

    python3 tools/python_probe_bench.py --db DIR [--layer 20] [--count 1000000] [--runs 5]

needs the module `awari_egdb` installed (README "From Python") and numpy.
Draws `count` random boards of the layer (each with a Goedel number: an
index drawn uniformly, the board from `awari_egdb.position`), warms the
layer's table (reads it whole once), then times, one thread, `runs` times
each, alternating the two ways of reading the tables (mapped, pread):

- `Database.scores` on the (count, 12) uint8 array: positions per second;
- `Database.score` called once per board from a Python loop over a list of
  boards (the first 200,000): microseconds per call, loop included.

Prints each run and the medians; checks that both ways give the same
scores.
"""
import argparse
import statistics
import time

import numpy as np

import awari_egdb
from awari_egdb import Database
from awari_scores import layer_size  # tools/awari_scores.py, beside this script


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--layer", type=int, default=20)
    ap.add_argument("--count", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(20)
    size = layer_size(args.layer)
    idx = rng.integers(0, size, size=args.count)
    boards = np.array([awari_egdb.position(args.layer, int(i)) for i in idx], dtype=np.uint8)
    singles = [list(map(int, b)) for b in boards[:200_000]]
    dbs = {"mapped": Database(args.db, mapped=True), "pread": Database(args.db)}
    # Warm: the whole table read once through the page cache.
    with open(f"{args.db}/scores.{args.layer}", "rb") as f:
        while f.read(1 << 24):
            pass
    want = dbs["mapped"].scores(boards)
    assert np.array_equal(want, dbs["pread"].scores(boards))
    rates = {k: [] for k in dbs}
    calls = {k: [] for k in dbs}
    for run in range(args.runs):
        for name, db in dbs.items():
            t = time.perf_counter()
            db.scores(boards)
            rates[name].append(args.count / (time.perf_counter() - t))
            score = db.score
            t = time.perf_counter()
            for b in singles:
                score(b)
            calls[name].append((time.perf_counter() - t) / len(singles) * 1e6)
            print(f"run {run} {name}: scores {rates[name][-1] / 1e6:.2f} M/s, "
                  f"score {calls[name][-1]:.2f} us/call", flush=True)
    for name in dbs:
        print(f"median {name}: scores {statistics.median(rates[name]) / 1e6:.2f} M positions/s, "
              f"score {statistics.median(calls[name]):.2f} us/call")


if __name__ == "__main__":
    main()
