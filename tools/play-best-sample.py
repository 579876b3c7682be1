#!/usr/bin/env python3
"""Plays random positions out with `awari play --computer both` and counts
the games that end with the result captured + score predicts.

Usage: tools/play-best-sample.py DB [COUNT] [SEED] [LOW] [HIGH]
(default 60 positions of layers 6..=16, seed 7). Each position is a random
Goedel number of a random layer (South to move, with a move to play), the
seeds off the board split evenly (South taking an odd one, as `play`
does). Prints how many games end with the predicted result, of those how
many with the exact final score and how many ended earlier, a side
having a majority (the rules' end), and each game that did not. AWARI names the binary (default target/release/awari).
"""

import json
import math
import os
import random
import re
import subprocess
import sys

AWARI = os.environ.get("AWARI", "target/release/awari")


def run(*args):
    return subprocess.run([AWARI, *map(str, args)], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, check=True).stdout


def layer_size(n):
    return math.comb(n + 11, 11) - (math.comb(n + 5, 11) if n >= 6 else 0)


def main():
    db = sys.argv[1]
    count, seed, low, high = (int(a) for a in (sys.argv[2:] + ["60", "7", "6", "16"][len(sys.argv) - 2:]))
    rng = random.Random(seed)
    sign = lambda x: (x > 0) - (x < 0)
    results = exact = majority = 0
    for _ in range(count):
        while True:
            n = rng.randint(low, high)
            pits = json.loads(run("position", "--json", n, rng.randrange(layer_size(n))))["pits"]
            answer = json.loads(run("query", "--db", db, "--json", *pits))
            if answer["best"]:
                break
        off = 48 - n
        south, north = off - off // 2, off // 2
        score = answer["score"]
        want = (south + (n + score) / 2, north + (n - score) / 2)
        pos = ",".join(map(str, pits[:6])) + "/" + ",".join(map(str, pits[6:])) + f"/S/{south},{north}"
        out = run("play", "--db", db, "--pos", pos, "--computer", "both", "--clock", "none", "--depth", "1")
        got = tuple(map(float, re.findall(r"final score: South ([\d.]+), North ([\d.]+)", out)[-1]))
        if sign(got[0] - got[1]) == sign(want[0] - want[1]):
            results += 1
            exact += got == want
            majority += got != want and max(got) > 24
        else:
            print(f"{pos}: score {score:+}, predicted {want}, ended {got}")
    print(f"{results}/{count} with the predicted result: {exact} with the predicted final score, "
          f"{majority} ended when a side had a majority (the rules' end) before it")


main()
