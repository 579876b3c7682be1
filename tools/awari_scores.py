#!/usr/bin/env python3
"""Reads exact awari scores from a folder of scores.N tables (ours or the VU
dataset's), independently of the Rust code: the Goedel index is implemented
here from the module docs of src/index.rs; each table is read with numpy.memmap.

Needs numpy (pip install numpy); --verify also needs xxhash (pip install
xxhash); compressed tables (scores.N.zst, written by `awari compress`, format
versions 1 and 2) need zstandard (pip install zstandard).

Usage: python3 tools/awari_scores.py [--db DIR] [--verify] P0 P1 ... P11
prints "seeds index score" for the position (pits 0..5 the mover's, 6..11
the opponent's). Without --db the folder is $AWARI_PATH. With --verify the
table read is first checked against the checksum in the folder's
manifest.json (xxh3-64, read whole).

A value outside -n..n in a table of n seeds is reported as a damaged table,
never returned. Exit status as the awari binary's: 0 ok; 1 a damaged table
(a wrong size, a value out of range, a bad compressed file, a checksum that
differs); 2 bad input, a missing layer, a format this tool does not read
(format 3: `tables.N.zst`, or a `scores.N.zst` of version 3), or I/O.

It is kept as an oracle for the tests (tests/python_tool.rs), not as the
way to read tables from Python: for that, the package `awari_egdb`
(python/, README "From Python") reads every format the library reads, in
batches from numpy, with moves, best play and the envelope.

As a library:
    goedel(pits) -> int          the position's index within its layer
    layer_size(n) -> int         positions in layer n
    score(folder, pits) -> int   the stored score (folder None: $AWARI_PATH)
    verify_table(folder, n)      checks scores.n against the manifest's
                                 xxh3-64 (raises DamagedTable, a ValueError,
                                 if it differs)
    CompressedTable(path)        a scores.n.zst file: t[g] is entry g,
                                 len(t) the layer's size, t.blocks() the
                                 decompressed blocks in order

A table whose raw file is absent is read from its compressed copy: the
header is checked (magic, version, table, layer, size, block index; with
xxhash also the header's checksum) and each block's zstd frame carries its
own content checksum.
"""
import argparse
import os
import struct
import sys

try:
    import numpy as np
except ImportError:
    if __name__ == "__main__":
        # The same shape as every other error here: one line, exit 2.
        print("awari_scores: needs the numpy package (pip install numpy)", file=sys.stderr)
        sys.exit(2)
    raise ImportError("tools/awari_scores.py needs the numpy package (pip install numpy)") from None

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


class DamagedTable(ValueError):
    """A table that is there but damaged: the binary's exit status 1."""


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
                _MAPS[key] = CompressedTable(path + ".zst", layer=n, kind=0)
                return _MAPS[key]
            layer_file = os.path.join(folder, f"tables.{n}.zst")
            if os.path.exists(layer_file):
                raise ValueError(
                    f"{layer_file}: compressed in format 3 (the layer's three tables coded "
                    "together with context models), which this tool does not read; "
                    f"`awari decompress --db {folder} --layers {n}` writes scores.{n} back, "
                    "or use `awari query`")
            raise FileNotFoundError(
                f"{folder}: no scores.{n} (nor scores.{n}.zst): layer {n} is not there")
        size = layer_size(n)
        found = os.path.getsize(path)
        # scores.48 may keep the initial position in one extra byte.
        if found != size and not (n == 48 and found == size + 1):
            raise DamagedTable(
                f"{path}: {found} bytes, but layer {n} has {size} positions: the table is "
                "damaged (truncated or of another layer)")
        _MAPS[key] = np.memmap(path, dtype=np.int8, mode="r")
    return _MAPS[key]


MAGIC = b"AWARIZST"
HEADER = struct.Struct("<8sIB3x16sIIQiIQQ")
KINDS = {0: "scores", 1: "lower", 2: "upper"}


class CompressedTable:
    """A table compressed by `awari compress`: zstd blocks behind a block
    index (the format is documented in the crate's `codec` module). Entries
    are signed bytes; t[g] decompresses the block holding entry g (the last
    few blocks are kept)."""

    def __init__(self, path, layer=None, kind=None):
        try:
            import zstandard
        except ImportError as e:
            raise ImportError(
                f"{path}: reading compressed tables needs the zstandard package "
                "(pip install zstandard); or run 'awari decompress'"
            ) from e
        self.path = path
        with open(path, "rb") as f:
            data = f.read()
        self.data = data
        bad = lambda why: DamagedTable(f"{path}: not a compressed awari table ({why}); the file is damaged")
        if len(data) < HEADER.size:
            raise bad("shorter than its header")
        (magic, version, table, rules, n, block, entries, level, dsize,
         raw_xxh3, meta_xxh3) = HEADER.unpack_from(data, 0)
        if magic != MAGIC:
            raise bad("bad magic")
        if version not in (1, 2):
            # Not damage: a format this tool does not read (3, context
            # models; or a later one).
            raise ValueError(
                f"{path}: compressed in format version {version}, which this tool does not "
                "read (it reads versions 1 and 2); `awari decompress` writes the raw table "
                "back, or use `awari query`")
        if table not in KINDS or (kind is not None and table != kind):
            raise bad(f"it holds table {table}")
        if layer is not None and n != layer:
            raise bad(f"it holds layer {n}, not {layer}")
        if n > MAX_SEEDS or n == 47 or entries != layer_size(n):
            raise bad(f"{entries} entries for layer {n}")
        if not 1 <= block <= 64 << 20:
            raise bad(f"block size {block}")
        if (version == 1) != (dsize == 0) or dsize > 1 << 20:
            raise bad(f"dictionary of {dsize} bytes in version {version}")
        self.layer, self.kind, self.block_size, self.entries = n, KINDS[table], block, entries
        self.raw_xxh3 = f"{raw_xxh3:016x}"
        k = -(-entries // block)
        end_index = HEADER.size + 8 * (k + 1)
        if len(data) < end_index + dsize:
            raise bad("truncated block index")
        self.offsets = struct.unpack_from(f"<{k + 1}Q", data, HEADER.size)
        if self.offsets[0] != end_index + dsize or self.offsets[-1] != len(data) or any(
            a > b for a, b in zip(self.offsets, self.offsets[1:])
        ):
            raise bad("block index out of order")
        try:
            import xxhash
            h = xxhash.xxh3_64()
            h.update(data[:64])
            h.update(data[HEADER.size:end_index + dsize])
            if h.intdigest() != meta_xxh3:
                raise bad("header checksum")
        except ImportError:
            pass  # the frames' own checksums still guard every block
        dctx = {}
        if dsize:
            dctx["dict_data"] = zstandard.ZstdCompressionDict(data[end_index:end_index + dsize])
        self._dctx = zstandard.ZstdDecompressor(**dctx)
        self._cache = {}

    def __len__(self):
        return self.entries

    def block(self, i):
        """Block i, decompressed (one signed byte per entry)."""
        if i in self._cache:
            return self._cache[i]
        want = min(self.block_size, self.entries - i * self.block_size)
        frame = self.data[self.offsets[i]:self.offsets[i + 1]]
        try:
            out = self._dctx.decompress(frame, max_output_size=want)
        except Exception as e:  # zstandard.ZstdError: a damaged block
            raise DamagedTable(f"{self.path}: block {i} is damaged ({e})") from None
        if len(out) != want:
            raise DamagedTable(
                f"{self.path}: block {i} holds {len(out)} entries, not {want}: the file is damaged")
        if len(self._cache) >= 8:
            self._cache.pop(next(iter(self._cache)))
        self._cache[i] = np.frombuffer(out, dtype=np.int8)
        return self._cache[i]

    def blocks(self):
        """Every block in order."""
        for i in range(len(self.offsets) - 1):
            yield self.block(i)

    def __getitem__(self, g):
        if not 0 <= g < self.entries:
            raise IndexError(f"entry {g} of a table of {self.entries}")
        return self.block(g // self.block_size)[g % self.block_size]


def score(folder, pits):
    """The stored score of the position for the side to move."""
    pits = check_board(pits)
    n = sum(pits)
    v = int(table(folder, n)[goedel(pits)])
    if not -n <= v <= n:
        raise DamagedTable(
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
    if isinstance(t, CompressedTable):
        for b in t.blocks():
            h.update(b.tobytes())
    else:
        step = 1 << 24
        for start in range(0, len(t), step):
            h.update(t[start:start + step].tobytes())
    found = h.hexdigest()
    if found != want:
        raise DamagedTable(
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
    except DamagedTable as e:
        print(f"awari_scores: {e}", file=sys.stderr)
        # A damaged table is a failed check, like the binary's exit 1.
        return 1
    except ValueError as e:
        print(f"awari_scores: {e}", file=sys.stderr)
        return 2
    except (OSError, ImportError) as e:
        print(f"awari_scores: {e}", file=sys.stderr)
        return 2
    print(sum(a.pits), g, s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
