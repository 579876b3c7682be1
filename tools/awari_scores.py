#!/usr/bin/env python3
"""Reads exact awari scores from a folder of scores.N tables (ours or the VU
dataset's), independently of the Rust code: the Goedel index is implemented
here from the module docs of src/index.rs; each table is read with numpy.memmap.

Needs numpy (pip install numpy); --verify and compressed tables (format 4,
written by `awari compress`: tables.N.zst, the full form, or scores.N.zst,
the scores alone) also need xxhash (pip install xxhash).

Usage: python3 tools/awari_scores.py [--db DIR] [--verify] P0 P1 ... P11
prints "seeds index score" for the position (pits 0..5 the mover's, 6..11
the opponent's). Without --db the folder is $AWARI_PATH. With --verify the
table read is first checked against the checksum in the folder's
manifest.json (xxh3-64, read whole).

A value outside -n..n in a table of n seeds is reported as a damaged table,
never returned. Exit status as the awari binary's: 0 ok; 1 a damaged table
(a wrong size, a value out of range, a bad compressed file, a checksum that
differs) or a compressed file of the retired formats 1, 2 and 3 (named, with
the release that reads it); 2 bad input, a missing layer, a file that leaves
"don't care" entries (only the library's probe resolves them), or I/O.

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
    CompressedTable(path)        a tables.n.zst or scores.n.zst file (its
                                 scores): t[g] is entry g, len(t) the
                                 layer's size, t.blocks() the decoded
                                 blocks in order
    unrank(n, g) -> list         the board of index g in layer n

A table whose raw file is absent is read from its compressed copy (format 4,
the crate's `codec::v4` module docs): header, block counts, sparse index and
model are checked (with the header's checksum of them, which covers the
group checks too), each block's 4 KiB group of blocks is checked against
its group check the first time it is read, and each block is decoded whole
and checked (it must end in the coder state its values call for, having
read exactly its bytes).
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
            # The scores alone, else the full form (the layer's three tables).
            for copy in (path + ".zst", os.path.join(folder, f"tables.{n}.zst")):
                if os.path.exists(copy):
                    _MAPS[key] = CompressedTable(copy, layer=n)
                    return _MAPS[key]
            raise FileNotFoundError(
                f"{folder}: no scores.{n} (nor scores.{n}.zst, tables.{n}.zst): layer {n} is "
                "not there")
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
# Format 4's header: magic, version, tables held, probability bits, envelope
# block bytes, rule set, layer, the most entries a block holds, entries,
# blocks, model bytes, checksums of the raw scores, lower and upper, log2
# of the entries per sparse index entry, flags, bytes per block, envelope
# blocks, the checksum of header, index, counts and models.
HEADER = struct.Struct("<8sIBBH16sIIQIIQQQBBHIQ")
FORMAT = 4
SCORES_ONLY, FULL = 0b001, 0b111
PROB_BITS = 12
SLOTS = 1 << PROB_BITS
LOW = 1 << 16
SPARSE_BITS = 13
ALIGN = 64
DONT_CARE = 1
GROUP_CHECKS = 2
# Bytes of score blocks a group check covers (at least one block).
GROUP_BYTES = 4096
# The last release that reads the retired formats 1, 2 and 3.
LAST_RELEASE_OF_RETIRED = "awari-egdb 0.1.0 (git 44b1542)"


class RetiredFormat(ValueError):
    """A compressed file of format 1, 2 or 3, which the binary no longer
    reads either (it refuses it as a file it cannot read: exit status 1)."""


def unrank(n, g):
    """The board of index g in layer n (the inverse of goedel)."""
    if not 0 <= g < layer_size(n):
        raise ValueError(f"index {g} is outside layer {n}")
    pits = [0] * PITS
    m, full = n, 1
    for k in range(PITS - 1, -1, -1):
        below = BELOW[full][k][m]
        s = 0
        while s < m and below[s + 1] <= g:
            s += 1
        g -= below[s]
        pits[k] = s
        if k >= 6 and s == 0:
            full = 0
        m -= s
    return pits


def advance(p):
    """Steps p to the next board of its layer in Goedel order (as
    src/index's advance)."""
    while True:
        i = next(k for k, x in enumerate(p) if x > 0)
        v = p[i]
        p[i] = 0
        p[i + 1] += 1
        p[0] = v - 1
        if 0 in p[6:]:
            return
        rest = sum(p[:6])
        p[:6] = [0] * 6
        p[5] = rest


def count_bits(cap):
    return (cap - 1).bit_length()


def counts_bytes(blocks, cap):
    return (blocks * count_bits(cap) + 7) // 8


def buckets(freqs, alphabet):
    """Per slot of a class of frequencies `freqs`: its symbol and its rank
    among the symbol's slots, from the frequencies alone (the alias method,
    as the coder lays them out: Vose's, in the crate's order)."""
    k = max(64, 1 << (alphabet - 1).bit_length())
    w = SLOTS // k
    f = [0] * k
    if all(x == 0 for x in freqs):
        f[0] = SLOTS
    else:
        f[:len(freqs)] = freqs
    rem = list(f)
    small = [s for s in range(k) if rem[s] < w][::-1]
    large = [s for s in range(k) if rem[s] >= w][::-1]
    cut = []
    while small:
        s = small.pop()
        big = large.pop()
        cut.append((s, rem[s], big))
        rem[big] -= w - rem[s]
        (small if rem[big] < w else large).append(big)
    while large:
        big = large.pop()
        cut.append((big, w, big))
    sym, rank, seen = [0] * SLOTS, [0] * SLOTS, [0] * k
    for j, (a, d, b) in enumerate(cut):
        for slot in range(j * w, j * w + w):
            s = a if slot - j * w < d else b
            sym[slot], rank[slot] = s, seen[s]
            seen[s] += 1
    return sym, rank, [max(x, 1) for x in f]


def read_varint(b, at):
    v = shift = 0
    while shift < 35:
        if at >= len(b):
            return None, at
        byte = b[at]
        at += 1
        v |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return v, at
        shift += 7
    return None, at


class CompressedTable:
    """The scores of a table compressed by `awari compress` (format 4, the
    full form `tables.N.zst` or the scores alone `scores.N.zst`): blocks of
    a fixed number of bytes, each coded by rANS in the contexts of its
    entries, behind a sparse index (the format is documented in the crate's
    `codec::v4` module). t[g] decodes the block holding entry g whole and
    checks it (the last few blocks are kept); entries are signed bytes."""

    def __init__(self, path, layer=None):
        try:
            import xxhash
        except ImportError as e:
            raise ImportError(
                f"{path}: reading compressed tables needs the xxhash package "
                "(pip install xxhash); or run 'awari decompress'"
            ) from e
        self._xxh3 = xxhash.xxh3_64_intdigest
        self.path = path
        with open(path, "rb") as f:
            data = f.read()
        self.data = data
        bad = lambda why: DamagedTable(f"{path}: not a compressed awari table ({why}); the file is damaged")
        if len(data) < 12:
            raise bad("shorter than its header")
        if data[:8] != MAGIC:
            raise bad("bad magic")
        version = struct.unpack_from("<I", data, 8)[0]
        if version in (1, 2, 3):
            raise RetiredFormat(
                f"{path} is compressed in format {version}, which neither this tool nor the "
                f"awari binary of this release reads: decompress it with "
                f"{LAST_RELEASE_OF_RETIRED}, then compress it with this release")
        if version != FORMAT:
            raise bad(f"format version {version}, this tool reads version {FORMAT}")
        if len(data) < HEADER.size:
            raise bad("shorter than its header")
        (_, _, tables, prob_bits, env_bytes, _rules, n, cap, entries, blocks, model_bytes,
         raw_scores, _raw_lower, _raw_upper, sparse_bits, flags, block_bytes, env_blocks,
         meta_xxh3) = HEADER.unpack_from(data, 0)
        if tables not in (SCORES_ONLY, FULL) or prob_bits != PROB_BITS:
            raise bad(f"tables {tables:#05b}, probability bits {prob_bits}")
        if flags & ~(DONT_CARE | GROUP_CHECKS) or (flags & DONT_CARE and tables != SCORES_ONLY):
            raise bad(f"flags {flags:#x}")
        if flags & DONT_CARE:
            # Not damage: values only the library's probe resolves.
            raise ValueError(
                f"{path}: the file leaves \"don't care\" entries, which only a probe that "
                "resolves them through the lower layers reads (awari query); this tool does not")
        if layer is not None and n != layer:
            raise bad(f"it holds layer {n}, not {layer}")
        if n > MAX_SEEDS or n == 47 or entries != layer_size(n):
            raise bad(f"{entries} entries for layer {n}")
        if not 1 <= cap <= 4095 or not 16 <= block_bytes <= 4096 or sparse_bits != SPARSE_BITS:
            raise bad(f"blocks of {block_bytes} bytes and at most {cap} entries")
        if blocks > entries or blocks * cap < entries:
            raise bad(f"{blocks} blocks of at most {cap} entries for {entries}")
        full = tables == FULL
        if not full:
            env_bytes = env_blocks = 0
        ns = -(-entries // (1 << SPARSE_BITS))
        index_end = HEADER.size + 8 * ns + counts_bytes(blocks, cap)
        if full:
            index_end += 8 * ns + counts_bytes(env_blocks, cap)
        models_end = index_end + model_bytes
        # A check of every group of score blocks (the low 32 bits of the
        # xxh3-64 of their bytes) follows the models.
        self.group_blocks = max(1, GROUP_BYTES // block_bytes) if flags & GROUP_CHECKS else 0
        groups = -(-blocks // self.group_blocks) if self.group_blocks else 0
        meta_end = models_end + 4 * groups
        self.data_start = -(-meta_end // ALIGN) * ALIGN
        total = self.data_start + blocks * block_bytes + env_blocks * env_bytes
        if len(data) != total:
            raise bad(f"{len(data)} bytes, its header and index call for {total}")
        if self._xxh3(data[:88] + data[HEADER.size:meta_end]) != meta_xxh3:
            raise bad("header checksum")
        if any(data[meta_end:self.data_start]):
            raise bad("the padding before the blocks is not zero")
        self.layer, self.kind, self.entries = n, "scores", entries
        self.block_bytes, self.raw_xxh3 = block_bytes, f"{raw_scores:016x}"
        # The entries of each block (less one, count_bits(cap) bits each),
        # where each block starts, and the sparse index they give.
        bits = count_bits(cap)
        at = HEADER.size + 8 * ns
        packed = np.frombuffer(data, dtype=np.uint8, count=counts_bytes(blocks, cap), offset=at)
        unpacked = np.unpackbits(packed, bitorder="little")
        if unpacked[blocks * bits:].any():
            raise bad("bits after the last block count")
        weights = (1 << np.arange(bits, dtype=np.int64))
        counts = unpacked[:blocks * bits].reshape(blocks, bits).astype(np.int64) @ weights + 1
        if int(counts.max()) > cap or int(counts.sum()) != entries:
            raise bad("block counts")
        self.counts = counts
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        sparse = np.frombuffer(data, dtype="<u8", count=ns, offset=HEADER.size).astype(np.int64)
        at_g = np.arange(ns, dtype=np.int64) << SPARSE_BITS
        block_of = np.searchsorted(self.starts, at_g, side="right") - 1
        if not np.array_equal(sparse, (block_of << 32) | (at_g - self.starts[block_of])):
            raise bad("sparse index")
        # The scores' model: classes, the class of every context, each
        # class's frequencies (the envelope's model follows in the full form).
        self.group_checks = np.frombuffer(data, dtype="<u4", count=groups, offset=models_end)
        self.blocks_total = blocks
        self.verified = set()
        m = data[index_end:models_end]
        self.alphabet = 2 * n + 1
        contexts = (self.alphabet + 1) ** 2 * 15
        classes = int.from_bytes(m[:2], "little") if len(m) >= 2 else 0
        if not 1 <= classes <= 256 or len(m) < 2 + contexts:
            raise bad(f"a model of {classes} classes")
        self.class_of = m[2:2 + contexts]
        if max(self.class_of) >= classes:
            raise bad("a context of no class")
        at = 2 + contexts
        self.classes = []
        for _ in range(classes):
            freqs = []
            for _ in range(self.alphabet):
                x, at = read_varint(m, at)
                if x is None or x > SLOTS:
                    raise bad("model frequencies")
                freqs.append(x)
            if sum(freqs) not in (0, SLOTS):
                raise bad("model frequencies")
            self.classes.append(buckets(freqs, self.alphabet))
        if not full and at != len(m):
            raise bad("bytes after the model")
        self._cache = {}

    def __len__(self):
        return self.entries

    def block(self, i):
        """Block i, decoded whole and checked (one signed byte per entry)."""
        if i in self._cache:
            return self._cache[i]
        n, count = self.layer, int(self.counts[i])
        at0 = self.data_start + i * self.block_bytes
        z = self.data[at0:at0 + self.block_bytes]
        damaged = lambda why: DamagedTable(f"{self.path}: block {i} is damaged ({why})")
        if self.group_blocks and i // self.group_blocks not in self.verified:
            gi = i // self.group_blocks
            first = gi * self.group_blocks
            last = min(first + self.group_blocks, self.blocks_total)
            at_g = self.data_start + first * self.block_bytes
            group = self.data[at_g:self.data_start + last * self.block_bytes]
            if self._xxh3(bytes(group)) & 0xFFFFFFFF != int(self.group_checks[gi]):
                raise damaged("its group of blocks does not match its check")
            self.verified.add(gi)
        x = int.from_bytes(z[:3], "big")
        if not LOW <= x < LOW << 8:
            raise damaged("it does not start with a coder state")
        at, none = 3, self.alphabet
        values = self.alphabet + 1
        p = unrank(n, int(self.starts[i]))
        out = bytearray(count)
        for j in range(count):
            s1 = out[j - 1] if j > 0 else none
            k = p[0] + p[1] + 2
            sv = out[j - k] if p[2] > 0 and k <= j else none
            t = (out[j - 2] > out[j - 1]) - (out[j - 2] < out[j - 1]) + 1 if j > 1 else 1
            ctx = ((s1 * values + sv) * 5 + min(p[0], 4)) * 3 + t
            sym, rank, freq = self.classes[self.class_of[ctx]]
            slot = x & (SLOTS - 1)
            s = sym[slot]
            x = (freq[s] * (x >> PROB_BITS) + rank[slot]) & 0xFFFFFFFF
            # At most two bytes a symbol, zeros past the block (as the crate's
            # decoder reads them).
            for _ in range((x < LOW) + (x < LOW >> 8)):
                x = (x << 8) | (z[at] if at < len(z) else 0)
                at += 1
            out[j] = s
            if p[0] > 0:
                p[0] -= 1
                p[1] += 1
            elif j + 1 < count:
                advance(p)
        if max(out) >= self.alphabet:
            raise damaged("a symbol outside the alphabet")
        raw = bytes((v - n) & 0xFF for v in out)
        if x != LOW | (self._xxh3(raw) & (LOW - 1)) or at > len(z) or any(z[at:]):
            raise damaged("it does not end in the state its values call for")
        if len(self._cache) >= 8:
            self._cache.pop(next(iter(self._cache)))
        self._cache[i] = np.frombuffer(raw, dtype=np.int8)
        return self._cache[i]

    def blocks(self):
        """Every block in order."""
        for i in range(len(self.counts)):
            yield self.block(i)

    def __getitem__(self, g):
        if not 0 <= g < self.entries:
            raise IndexError(f"entry {g} of a table of {self.entries}")
        i = int(np.searchsorted(self.starts, g, side="right")) - 1
        return self.block(i)[g - int(self.starts[i])]


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
    except (DamagedTable, RetiredFormat) as e:
        print(f"awari_scores: {e}", file=sys.stderr)
        # A damaged table (or one of a retired format, which the binary
        # cannot read either) is a failed check, like the binary's exit 1.
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
