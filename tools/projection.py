#!/usr/bin/env python3
"""Projects the time, memory and disk of building layers 0..=48 from the
per-position costs a build measured (the compact solver's layers in the
manifest.json of one or more database folders).

Model, per layer n (layer 47 is skipped, as the builder does):
  * compute: positions x core-seconds per position / (cores x efficiency).
    The core-seconds per position are the measured ones of the largest
    compact layers (wall x threads / positions); they grew with the layer's
    size on the measured layers, so the cost is also projected growing as
    size^alpha, alpha fitted to the compact layers of 24 seeds and up
    (columns "flat" and "grown").
  * I/O at the disk's bandwidth: the lower layers a capture reaches
    (n-18..=n-2) streamed three times per layer (as stored, compressed at
    the measured ratio), the lists written
    and read (measured bytes per position), the raw tables written once and
    read once more to be compressed, the compressed tables written.
  * memory: the compact solver's 1 byte per position plus its 28 MiB.
  * disk: the compressed tables of every layer below, plus, during the
    layer, its raw lower and upper tables, their compressed copies, its
    facts file (half a byte per position) and its lists (the measured peak
    per position), and at the end its raw scores.

Usage: tools/projection.py DIR... [--point N:SECONDS:THREADS]... [--cores C]
           [--memory GIB] [--disk GB] [--bandwidth GB/S] [--efficiency E]

--point adds a compact layer measured elsewhere (its folder gone) to the
fit of the cost's growth.
"""
import argparse
import json
import math

GB = 1e9
GIB = 2**30
FIXED = 28 * 2**20  # the compact solver's buffers and baseline


def size(n):
    return math.comb(n + 11, 11) - math.comb(n + 5, 11)


def layers(last):
    return [n for n in range(last + 1) if n != 47]


def measured(m):
    """Per compact layer: positions, core-seconds per position, list bytes
    written, read and held at most per position."""
    out = {}
    for l in m["layers"]:
        io = l.get("io")
        if l.get("solver") != "compact" or not io:
            continue
        pos = l["positions"]
        out[l["seeds"]] = {
            "pos": pos,
            "core": l["wall_seconds"] * l["threads"] / pos,
            "wall": l["wall_seconds"],
            "threads": l["threads"],
            "written": io["scratch_written_bytes"] / pos,
            "read": io["scratch_read_bytes"] / pos,
            "peak": io["scratch_peak_bytes"] / pos,
        }
    return out


def ratio(m, first):
    """Compressed bytes over raw bytes of the tables of layers >= first."""
    packed = raw = 0
    for c in m.get("compressed", []):
        if c["seeds"] >= first:
            packed += c["bytes"]
            raw += size(c["seeds"])
    return packed / raw if raw else 0.46


def fit_alpha(points):
    """Least-squares slope of log(cost) over log(size), layers 24 and up."""
    pts = [(math.log(size(n)), math.log(c)) for n, c in points.items() if n >= 24]
    if len(pts) < 2:
        return 0.0
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--point", action="append", default=[],
                    help="N:SECONDS:THREADS of a compact layer measured elsewhere")
    ap.add_argument("--cores", type=int, default=64)
    ap.add_argument("--memory", type=float, default=256, help="GiB")
    ap.add_argument("--disk", type=float, default=4000, help="GB")
    ap.add_argument("--bandwidth", type=float, default=3.0, help="GB/s")
    ap.add_argument("--efficiency", type=float, default=0.5,
                    help="parallel efficiency on --cores (measured on 2 cores: 0.97)")
    a = ap.parse_args()
    ms = [json.load(open(f"{d}/manifest.json")) for d in a.dirs]
    meas = {}
    for m in ms:
        meas.update(measured(m))
    m = {"compressed": [c for m in ms for c in m.get("compressed", [])]}
    points = dict((n, v["core"]) for n, v in meas.items())
    for p in a.point:
        n, sec, thr = p.split(":")
        points.setdefault(int(n), float(sec) * int(thr) / size(int(n)))
    if not meas:
        raise SystemExit("no layer built by the compact solver with I/O figures in these folders")
    ref = max(meas)
    r = meas[ref]
    alpha = max(0.0, fit_alpha(points))
    comp = ratio(m, 24)
    written = max(v["written"] for v in meas.values() if v["pos"] >= meas[ref]["pos"] / 4)
    read = max(v["read"] for v in meas.values() if v["pos"] >= meas[ref]["pos"] / 4)
    peak = max(v["peak"] for v in meas.values() if v["pos"] >= meas[ref]["pos"] / 4)
    print(f"measured: layer {ref}, {r['pos']:,} positions in {r['wall']:.0f} s on {r['threads']} threads: "
          f"{r['core'] * 1e9:.0f} core-ns per position; size exponent of the cost alpha = {alpha:.2f} "
          f"(compact layers {', '.join(str(n) for n in sorted(points) if n >= 24)}); "
          f"lists {written:.2f} B written, {read:.2f} B read, {peak:.2f} B peak per position; "
          f"compressed tables {comp:.3f} of raw")
    print(f"machine: {a.cores} cores at efficiency {a.efficiency}, {a.memory:g} GiB, "
          f"{a.disk:g} GB of disk at {a.bandwidth:g} GB/s")
    print()
    print("| layers | positions | compute h (flat / grown) | I/O h | memory GiB | disk peak GB | fits |")
    print("|---|---:|---:|---:|---:|---:|---|")
    below = 0  # compressed bytes of finished layers
    groups = [(0, 32), (33, 34), (35, 38), (39, 42), (43, 46), (48, 48)]
    rows = []
    tot = [0, 0.0, 0.0, 0.0, 0.0, 0.0]
    unfit = {}  # reason -> first layer
    for lo, hi in groups:
        g = [0, 0.0, 0.0, 0.0, 0.0, 0.0]  # positions, flat s, grown s, io s, mem, disk
        for n in [k for k in layers(48) if lo <= k <= hi]:
            s = size(n)
            core = r["core"]
            grown = core * (s / r["pos"]) ** alpha if s > r["pos"] else core
            par = a.cores * a.efficiency
            # Three passes over the layers a capture reaches: n-18..=n-2.
            lower = 3 * sum(size(k) for k in range(max(0, n - 18), n - 1) if k != 47) * comp
            io = lower + s * (written + read) + 3 * s * 2 + 3 * s * comp
            mem = s + FIXED
            disk = below + s * (2 + 0.5 + peak + 2 * comp / 3)
            disk = max(disk, below + s * (1 + peak + 2 * comp / 3))
            below += 3 * s * comp
            g[0] += s
            g[1] += s * core / par
            g[2] += s * grown / par
            g[3] += io / (a.bandwidth * GB)
            g[4] = max(g[4], mem)
            g[5] = max(g[5], disk)
            if mem > (a.memory - 1) * GIB:
                unfit.setdefault("memory", n)
            if disk > a.disk * GB:
                unfit.setdefault("disk", n)
        for i in range(4):
            tot[i] += g[i]
        tot[4] = max(tot[4], g[4])
        tot[5] = max(tot[5], g[5])
        rows.append((lo, hi, g))
    for lo, hi, g in rows + [(0, 48, tot)]:
        name = f"{lo}..={hi}" if lo != hi else f"{lo}"
        why = [f"{r} from layer {k}" for r, k in sorted(unfit.items(), key=lambda x: x[1]) if k <= hi]
        fits = "yes" if not why else "no: " + ", ".join(why)
        print(f"| {name} | {g[0] / 1e9:,.1f} G | {g[1] / 3600:,.1f} / {g[2] / 3600:,.1f} "
              f"| {g[3] / 3600:,.1f} | {g[4] / GIB:,.1f} | {g[5] / GB:,.0f} | {fits} |")
    print(f"\nfinal tables, compressed: {below / GB:,.0f} GB ({below / GB / 1000:.2f} TB); "
          f"raw scores alone: {sum(size(n) for n in layers(48)) / GB:,.0f} GB")


if __name__ == "__main__":
    main()
