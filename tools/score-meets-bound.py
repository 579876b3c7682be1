#!/usr/bin/env python3
"""How often a layer's score settles at the same threshold as one of its
envelope bounds: a won position (score > 0) whose score equals its lower
bound, a lost one (score < 0) whose score equals its upper bound. A sweep
that settled score and envelope together could share the predecessor walk
of exactly those settlements (docs/performance.md, issue 37).

Usage: tools/score-meets-bound.py DIR N [N ...]   (needs numpy)
"""
import sys

import numpy as np


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d = sys.argv[1]
    print("layer | positions | score settlements/pos | shared/pos | "
          "envelope settlements/pos | pinned | wins at lower | losses at upper")
    for n in map(int, sys.argv[2:]):
        def read(name):
            return np.fromfile(f"{d}/{name}.{n}", dtype=np.int8).astype(np.int32)
        s, lo, hi = read("scores"), read("lower"), read("upper")
        size = len(s)
        win, lose = s > 0, s < 0
        shared_w = (win & (s == lo)).sum()
        shared_l = (lose & (s == hi)).sum()
        env = (lo > -n).sum() + (hi < n).sum()
        print(f"{n} | {size:,} | {(win.sum() + lose.sum()) / size:.3f} | "
              f"{(shared_w + shared_l) / size:.3f} | {env / size:.3f} | "
              f"{(lo == hi).sum() / size:.1%} | {shared_w / max(1, win.sum()):.1%} | "
              f"{shared_l / max(1, lose.sum()):.1%}")


if __name__ == "__main__":
    main()
