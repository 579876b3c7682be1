#!/usr/bin/env python3
"""Checks tools/awari_scores.py against the awari binary.

Usage: python3 tools/test_awari_scores.py DIR BIN [--count N] [--seed S]

DIR is a folder of tables (ours or a VU folder), BIN the awari binary. The
script first checks its own Goedel index on the src/index.rs checkpoints and
against a brute-force enumeration of small layers, then picks N random
positions (uniform seed distributions, not through any index) over the
layers present in DIR plus the first and last position of each layer, asks
`BIN query --db DIR --stdin --json` about all of them at once, and compares
seeds, index and score with awari_scores.goedel and awari_scores.score
(numpy.memmap of scores.N, else its own reader of the compressed
scores.N.zst or tables.N.zst). Prints "N passed, M failed" and exits
non-zero on any mismatch.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import awari_scores as aw  # noqa: E402

CHECKPOINTS = [
    ([0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0, 0], 6, 2726),
    ([1, 1, 1, 1, 1, 2, 4, 2, 3, 0, 0, 0], 16, 588953),
    ([0, 2, 3, 4, 5, 6, 0, 2, 3, 4, 5, 6], 40, 31114014134),
]
SIZES = {0: 1, 1: 12, 2: 78, 3: 364, 4: 1365, 5: 4368, 6: 12375,
         16: 12685179, 20: 80214915, 48: 203648015935}


def valid(pits):
    return not all(x > 0 for x in pits[6:])


def self_check():
    """The index against the spec's figures and a brute-force ranking."""
    failures = []
    for pits, n, g in CHECKPOINTS:
        if sum(pits) != n or aw.goedel(pits) != g:
            failures.append(f"checkpoint {pits}: goedel {aw.goedel(pits)}, want {g}")
    for n, size in SIZES.items():
        if aw.layer_size(n) != size:
            failures.append(f"layer_size({n}) = {aw.layer_size(n)}, want {size}")
    # Layers 0..8 (the validity rule first bites at 6): every distribution,
    # sorted by pit 11 first ... pit 0, ranks as its place in that order.
    for n in range(0, 9):
        boards = sorted((b for b in distributions(n) if valid(b)), key=lambda b: b[::-1])
        if len(boards) != aw.layer_size(n):
            failures.append(f"layer {n}: {len(boards)} boards, layer_size {aw.layer_size(n)}")
        for g, b in enumerate(boards):
            if aw.goedel(b) != g or aw.unrank(n, g) != b:
                failures.append(f"{b}: goedel {aw.goedel(b)}, unrank {aw.unrank(n, g)}, "
                                f"brute force {g}")
                break
        # The walk the compressed reader takes: each board's successor.
        for b, after in zip(boards, boards[1:]):
            p = list(b)
            if p[0] > 0:
                p[0] -= 1
                p[1] += 1
            else:
                aw.advance(p)
            if p != after:
                failures.append(f"{b}: next {p}, brute force {after}")
                break
    return failures


def distributions(n, k=12):
    """Every way of putting n seeds into k pits."""
    if k == 1:
        yield [n]
        return
    for first in range(n + 1):
        for rest in distributions(n - first, k - 1):
            yield [first] + rest


def random_board(rng, n):
    """A uniform random valid distribution of n seeds (stars and bars)."""
    while True:
        bars = sorted(rng.sample(range(n + 11), 11))
        edges = [-1] + bars + [n + 11]
        pits = [edges[i + 1] - edges[i] - 1 for i in range(12)]
        if valid(pits):
            return pits


def layers_in(folder):
    found = []
    for name in os.listdir(folder):
        m = re.fullmatch(r"(?:scores\.(\d+)(?:\.zst)?|tables\.(\d+)\.zst)", name)
        n = m and int(m.group(1) or m.group(2))
        if m and n <= aw.MAX_SEEDS:
            found.append(n)
    return sorted(set(found))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("bin")
    ap.add_argument("--count", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20240601)
    a = ap.parse_args()

    failures = self_check()
    for f in failures:
        print(f"FAIL index: {f}")

    layers = layers_in(a.dir)
    if not layers:
        print(f"{a.dir}: no scores.N, scores.N.zst or tables.N.zst files")
        return 1
    rng = random.Random(a.seed)
    boards = []
    for n in layers:
        # The first and last positions of the layer: indices 0 and size - 1.
        boards.append([n] + [0] * 11)
        boards.append([0] * 11 + [n])
    while len(boards) < a.count + 2 * len(layers):
        boards.append(random_board(rng, rng.choice(layers)))
    for pits, n, g in CHECKPOINTS:
        if n in layers:
            boards.append(pits)

    stdin = "".join(" ".join(map(str, b)) + "\n" for b in boards)
    proc = subprocess.run([a.bin, "query", "--db", a.dir, "--stdin", "--json"],
                          input=stdin, capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"FAIL: {a.bin} query exited {proc.returncode}: {proc.stderr.strip()}")
        failures.append("binary")
    answers = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(answers) != len(boards):
        print(f"FAIL: {len(boards)} positions asked, {len(answers)} answers")
        failures.append("count")

    passed = failed = 0
    for b, ans in zip(boards, answers):
        n = sum(b)
        want = {"seeds": n, "index": aw.goedel(b), "score": aw.score(a.dir, b)}
        got = {k: ans.get(k) for k in want}
        if ans.get("pits", b) != b:
            got["pits"] = ans.get("pits")
        if got == want:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {' '.join(map(str, b))}: binary {got}, python {want}")
    # The edge positions have the extreme indices.
    for n in layers:
        if aw.goedel([n] + [0] * 11) != 0 or aw.goedel([0] * 11 + [n]) != aw.layer_size(n) - 1:
            failures.append(f"layer {n}: first/last index")
            print(f"FAIL index: layer {n} first/last")

    # The script's own command line prints "seeds index score".
    b = boards[-1]
    cli = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "awari_scores.py"),
                          "--db", a.dir] + [str(x) for x in b], capture_output=True, text=True)
    want_line = f"{sum(b)} {aw.goedel(b)} {aw.score(a.dir, b)}"
    if cli.returncode != 0 or cli.stdout.strip() != want_line:
        print(f"FAIL cli: {cli.stdout.strip()!r} {cli.stderr.strip()!r}, want {want_line!r}")
        failures.append("cli")

    failed += len(failures)
    print(f"{passed} passed, {failed} failed "
          f"({len(boards)} positions over layers {layers[0]}..{layers[-1]})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
