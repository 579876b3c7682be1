#!/usr/bin/env python3
"""Reads exact awari scores from a folder of scores.N tables (ours or the VU
dataset's), independently of the Rust code: the Goedel index is implemented
here from the module docs of src/index.rs; each table is read with numpy.memmap.

Needs numpy (pip install numpy); --verify also needs xxhash (pip install
xxhash).

Usage: python3 tools/awari_scores.py [--db DIR] [--verify] P0 P1 ... P11
prints "seeds index score" for the position (pits 0..5 the mover's, 6..11
the opponent's). Without --db the folder is $AWARI_PATH. With --verify the
table read is first checked against the checksum in the folder's
manifest.json (xxh3-64, read whole).

A value outside -n..n in a table of n seeds is reported as a damaged table,
never returned.

As a library:
    goedel(pits) -> int          the position's index within its layer
    layer_size(n) -> int         positions in layer n
    score(folder, pits) -> int   the stored score (folder None: $AWARI_PATH)
    verify_table(folder, n)      checks scores.n against the manifest's
                                 xxh3-64 (raises ValueError if it differs)
"""
import argparse
import os
import sys

import numpy as np

PITS = 12
MAX_SEEDS = 48

# WAYS[k][m]: ways to put m seeds into k pits, C(m + k - 1, k - 1); 0 for m < 0
# (handled by ways()).
WAYS = [[0] * (MAX_SEEDS + 1) for _ in range(PITS + 1)]
WAYS[0][0] = 1
for _k in range(1, PITS + 1):
    for _m in range(MAX_SEEDS + 1):
        WAYS[_k][_m] = WAYS[_k - 1][_m] + (WAYS[_k][_m - 1] if _m > 0 else 0)


def ways(k, m):
    return WAYS[k][m] if m >= 0 else 0


def completions(k, m, full):
    """Valid fillings of pits 0..k-1 with m seeds. `full`: every opponent pit
    above k-1 holds seeds, so a filling is invalid when the opponent pits
    left (6..k-1, none when k <= 6) all hold seeds too; count those by taking
    one seed out of each of them."""
    total = ways(k, m)
    if full:
        total -= ways(k, m - max(k - 6, 0))
    return total


# BELOW[full][k][m][s]: valid positions whose pit k holds fewer than s seeds,
# given m seeds for pits 0..k and the `full` state above pit k. Ranking is
# then one table read per pit.
BELOW = [[[[0] * (MAX_SEEDS + 2) for _ in range(MAX_SEEDS + 1)] for _ in range(PITS)] for _ in range(2)]
for _full in (0, 1):
    for _k in range(PITS):
        for _m in range(MAX_SEEDS + 1):
            _acc = 0
            for _s in range(_m + 1):
                BELOW[_full][_k][_m][_s] = _acc
                # Pit k holds _s: the opponent stays full only if it is an
                # opponent pit with seeds.
                _still = bool(_full) and _k >= 6 and _s > 0
                _acc += completions(_k, _m - _s, _still)
            BELOW[_full][_k][_m][_m + 1] = _acc


def layer_size(n):
    """C(n+11, 11) - C(n+5, 11): positions with n seeds whose opponent pits
    are not all non-empty."""
    if not 0 <= n <= MAX_SEEDS:
        raise ValueError(f"layer {n} does not exist: layers have 0 to {MAX_SEEDS} seeds")
    return completions(PITS, n, True)


def check_board(pits):
    pits = [int(x) for x in pits]
    if len(pits) != PITS:
        raise ValueError(f"a board is {PITS} pit counts, got {len(pits)}")
    if any(x < 0 for x in pits):
        raise ValueError("pit counts cannot be negative")
    if sum(pits) > MAX_SEEDS:
        raise ValueError(f"{sum(pits)} seeds on the board; awari has at most {MAX_SEEDS}")
    if all(x > 0 for x in pits[6:]):
        raise ValueError("every opponent pit (6..11) holds seeds: no Goedel number")
    return pits


def goedel(pits):
    """The position's rank among the valid positions of its layer, ordered by
    pit 11 first, then 10, ..., then 0 (colexicographic)."""
    pits = check_board(pits)
    m = sum(pits)
    full = 1
    g = 0
    for k in range(PITS - 1, -1, -1):
        s = pits[k]
        g += BELOW[full][k][m][s]
        if k >= 6 and s == 0:
            full = 0
        m -= s
    return g


_MAPS = {}


def folder_or_env(folder):
    if folder is None or folder == "":
        folder = os.environ.get("AWARI_PATH", "")
        if not folder:
            raise ValueError("no database folder: pass --db DIR or set AWARI_PATH")
    return folder


def table(folder, n):
    """scores.n of `folder`, memory-mapped as int8 and size-checked."""
    folder = folder_or_env(folder)
    key = (os.path.abspath(folder), n)
    if key not in _MAPS:
        path = os.path.join(folder, f"scores.{n}")
        if not os.path.exists(path):
            if os.path.exists(path + ".zst"):
                raise FileNotFoundError(
                    f"{path}: layer {n} is only compressed ({path}.zst), which this "
                    f"tool does not read; run 'awari decompress --db {folder}' or "
                    "query it with 'awari query'"
                )
            raise FileNotFoundError(f"{path}: layer {n} is not in {folder}")
        size = layer_size(n)
        found = os.path.getsize(path)
        # scores.48 may keep the initial position in one extra byte.
        if found != size and not (n == 48 and found == size + 1):
            raise ValueError(f"{path}: {found} bytes, but layer {n} has {size} positions")
        _MAPS[key] = np.memmap(path, dtype=np.int8, mode="r")
    return _MAPS[key]


def score(folder, pits):
    """The stored score of the position for the side to move."""
    pits = check_board(pits)
    n = sum(pits)
    v = int(table(folder, n)[goedel(pits)])
    if not -n <= v <= n:
        raise ValueError(
            f"scores.{n} holds {v} at index {goedel(pits)}, outside -{n}..{n}: the table is "
            f"damaged (check it with 'awari verify --db {folder_or_env(folder)} --checksums "
            "data/known-good.csv', or with --verify here)"
        )
    return v


def verify_table(folder, n):
    """Checks scores.n of `folder` against the xxh3-64 that the folder's
    manifest.json records for it (reads the table whole). Raises ValueError
    if they differ or the folder has no manifest (a VU folder has no
    checksums), ImportError without the xxhash package."""
    import json

    try:
        import xxhash
    except ImportError as e:
        raise ImportError(
            "checking checksums needs the xxhash package (pip install xxhash); "
            "or use 'awari verify --checksums'"
        ) from e
    folder = folder_or_env(folder)
    mpath = os.path.join(folder, "manifest.json")
    if not os.path.exists(mpath):
        raise ValueError(f"{folder}: no manifest.json, so no checksums to verify (a VU folder?)")
    with open(mpath, "rb") as f:
        try:
            manifest = json.loads(f.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ValueError(f"{mpath}: not a readable manifest ({e})") from None
    entry = next((l for l in manifest.get("layers", []) if l.get("seeds") == n), None)
    if entry is None:
        raise ValueError(f"{mpath}: layer {n} is not listed as built")
    want = entry["scores"]["xxh3"]
    h = xxhash.xxh3_64()
    t = table(folder, n)
    step = 1 << 24
    for start in range(0, len(t), step):
        h.update(t[start:start + step].tobytes())
    found = h.hexdigest()
    if found != want:
        raise ValueError(
            f"scores.{n}: checksum {found}, the manifest says {want}: the table is damaged"
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description="Exact awari scores from scores.N tables.")
    ap.add_argument("--db", metavar="DIR", help="folder of tables (default: $AWARI_PATH)")
    ap.add_argument("--verify", action="store_true",
                    help="check the table against the manifest's checksum first (needs xxhash)")
    ap.add_argument("pits", metavar="P", type=int, nargs=PITS, help="pit counts, pit 0 first")
    a = ap.parse_args(argv)
    try:
        g = goedel(a.pits)
        if a.verify:
            verify_table(a.db, sum(check_board(a.pits)))
        s = score(a.db, a.pits)
    except ValueError as e:
        print(f"awari_scores: {e}", file=sys.stderr)
        # A damaged table is a failed check, like the binary's exit 1.
        return 1 if "damaged" in str(e) else 2
    except (OSError, ImportError) as e:
        print(f"awari_scores: {e}", file=sys.stderr)
        return 2
    print(sum(a.pits), g, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
