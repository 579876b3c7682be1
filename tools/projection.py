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
  * memory: the compact solver's 1 byte per position plus its 28 MiB, within
    --memory less an eighth of it (at most 1 GiB) for the system.
  * disk: the compressed tables of every layer below, plus, during the
    layer, its raw lower and upper tables, their compressed copies, its
    facts file (half a byte per position) and its lists (the measured peak
    per position), and at the end its raw scores.

  * with --nodes N (an MPI build, one rank per node): compute and the lists
    are shared over the nodes (lists on each node's own scratch disk, at
    --scratch-bandwidth each), the tables stay on the shared folder (at
    --bandwidth in all); memory per node is the largest part's byte per
    position plus buffers; every rank sends the updates and exits for
    positions other ranks own, the measured bytes per position of an MPI
    layer scaled by the share of positions owned elsewhere ((N-1)/N), over
    --network GB/s per node. Each byte sent also costs --message-cost
    core-ns (packing, the exchange, unranking and applying it on arrival:
    measured here as the extra core time of two ranks over one process,
    per byte sent). Network time is added to compute (not overlapped).

Usage: tools/projection.py DIR... [--point N:SECONDS:THREADS]... [--cores C]
           [--memory GIB] [--disk GB] [--bandwidth GB/S] [--efficiency E]
           [--nodes N] [--network GB/S] [--scratch-bandwidth GB/S]
           [--sent BYTES:RANKS] [--message-cost NS]

--point adds a compact layer measured elsewhere (its folder gone) to the
fit of the cost's growth.
"""
import argparse
import json
import math

GB = 1e9
GIB = 2**30
FIXED = 28 * 2**20  # the compact solver's buffers and baseline
WINDOW = 2**20  # positions per window: a rank's part is whole windows
EXCHANGE = 2 * 16 * 2**16 * 8  # exits exchanged per round (compact.rs)
OUTBOX = 4 * WINDOW * 8  # sweep updates of one applied group, at most about
# Core-ns per byte sent between ranks: layers 22..=24 built by two ranks of
# one thread against one process of two threads, side by side on 2 cores
# (docs/cluster.md, "Measured on this machine"): (two-rank wall - one-process wall) x 2
# cores / bytes sent.
MESSAGE_COST = 2.5


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
            "ranks": l.get("ranks") or 1,
            "sent": io.get("sent_bytes", 0) / pos,
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
    ap.add_argument("--nodes", type=int, default=1,
                    help="MPI ranks, one per node of --cores, --memory and --disk (scratch)")
    ap.add_argument("--network", type=float, default=10.0, help="GB/s sent per node")
    ap.add_argument("--scratch-bandwidth", type=float,
                    help="GB/s of each node's scratch disk (default: --bandwidth)")
    ap.add_argument("--sent", help="BYTES:RANKS sent per position, measured with RANKS ranks "
                    "(default: the largest layer built with ranks in the folders)")
    ap.add_argument("--message-cost", type=float, default=MESSAGE_COST,
                    help="core-ns per byte sent (measured here: %(default)s)")
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
    ranked = [n for n, v in meas.items() if v["ranks"] > 1]
    if a.sent:
        b, k = a.sent.split(":")
        sent, sent_ranks, sent_from = float(b), int(k), "--sent"
    elif ranked:
        v = meas[max(ranked)]
        sent, sent_ranks, sent_from = v["sent"], v["ranks"], f"layer {max(ranked)}"
    elif a.nodes > 1:
        raise SystemExit("--nodes needs --sent or a layer built with ranks in these folders")
    else:
        sent, sent_ranks, sent_from = 0.0, 2, ""
    # The share of updates aimed at another rank's positions: (N-1)/N.
    sent_n = sent * ((a.nodes - 1) / a.nodes) / ((sent_ranks - 1) / sent_ranks)
    local_bw = a.scratch_bandwidth or a.bandwidth
    ref = max(n for n, v in meas.items() if v["ranks"] == 1)
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
    nodes = a.nodes
    if nodes == 1:
        print(f"machine: {a.cores} cores at efficiency {a.efficiency}, {a.memory:g} GiB, "
              f"{a.disk:g} GB of disk at {a.bandwidth:g} GB/s")
        print()
        print("| layers | positions | compute h (flat / grown) | I/O h | memory GiB | disk peak GB | fits |")
        print("|---|---:|---:|---:|---:|---:|---|")
    else:
        print(f"sent: {sent:.1f} B per position with {sent_ranks} ranks ({sent_from}), "
              f"{sent_n:.1f} B with {nodes}")
        print(f"cluster: {nodes} nodes of {a.cores} cores at efficiency {a.efficiency}, "
              f"{a.memory:g} GiB, {a.disk:g} GB of scratch at {local_bw:g} GB/s, "
              f"{a.network:g} GB/s of network each; a shared folder at {a.bandwidth:g} GB/s")
        print()
        print("| layers | positions | compute and messages h (flat / grown) | network TB | of it on the wire h | I/O h "
              "| memory per node GiB | shared disk peak GB | fits |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    below = 0  # compressed bytes of finished layers
    groups = [(0, 32), (33, 34), (35, 38), (39, 42), (43, 46), (48, 48)]
    rows = []
    tot = [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    unfit = {}  # reason -> first layer
    for lo, hi in groups:
        g = [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # positions, flat s, grown s, io s, mem, disk, sent
        for n in [k for k in layers(48) if lo <= k <= hi]:
            s = size(n)
            core = r["core"]
            grown = core * (s / r["pos"]) ** alpha if s > r["pos"] else core
            par = a.cores * a.efficiency * nodes
            # Three passes over the layers a capture reaches: n-18..=n-2.
            lower = 3 * sum(size(k) for k in range(max(0, n - 18), n - 1) if k != 47) * comp
            lists = s * (written + read)
            tables = 3 * s * 2 + 3 * s * comp
            net = s * sent_n
            msg = net * a.message_cost * 1e-9 / (a.cores * a.efficiency * nodes)
            if nodes == 1:
                io = (lower + lists + tables) / (a.bandwidth * GB)
                mem = s + FIXED
                disk = below + s * (2 + 0.5 + peak + 2 * comp / 3)
                disk = max(disk, below + s * (1 + peak + 2 * comp / 3))
                local = disk
            else:
                io = (lower + tables) / (a.bandwidth * GB) + lists / nodes / (local_bw * GB)
                part = math.ceil(s / nodes / WINDOW) * WINDOW
                mem = part + FIXED + EXCHANGE + OUTBOX
                disk = below + s * (2 + 2 * comp / 3)
                local = part * (0.5 + peak)
            below += 3 * s * comp
            g[0] += s
            g[1] += s * core / par + msg + net / (nodes * a.network * GB)
            g[2] += s * grown / par + msg + net / (nodes * a.network * GB)
            g[3] += io
            g[4] = max(g[4], mem)
            g[5] = max(g[5], disk)
            g[6] += net
            if mem > (a.memory - min(1.0, a.memory / 8)) * GIB:
                unfit.setdefault("memory", n)
            if local > a.disk * GB:
                unfit.setdefault("disk", n)
        for i in (0, 1, 2, 3, 6):
            tot[i] += g[i]
        tot[4] = max(tot[4], g[4])
        tot[5] = max(tot[5], g[5])
        rows.append((lo, hi, g))
    for lo, hi, g in rows + [(0, 48, tot)]:
        name = f"{lo}..={hi}" if lo != hi else f"{lo}"
        why = [f"{r} from layer {k}" for r, k in sorted(unfit.items(), key=lambda x: x[1]) if k <= hi]
        fits = "yes" if not why else "no: " + ", ".join(why)
        if nodes == 1:
            print(f"| {name} | {g[0] / 1e9:,.1f} G | {g[1] / 3600:,.1f} / {g[2] / 3600:,.1f} "
                  f"| {g[3] / 3600:,.1f} | {g[4] / GIB:,.1f} | {g[5] / GB:,.0f} | {fits} |")
        else:
            print(f"| {name} | {g[0] / 1e9:,.1f} G | {g[1] / 3600:,.1f} / {g[2] / 3600:,.1f} "
                  f"| {g[6] / 1e12:,.1f} | {g[6] / (nodes * a.network * GB) / 3600:,.2f} "
                  f"| {g[3] / 3600:,.1f} | {g[4] / GIB:,.2f} | {g[5] / GB:,.0f} | {fits} |")
    print(f"\nfinal tables, compressed: {below / GB:,.0f} GB ({below / GB / 1000:.2f} TB); "
          f"raw scores alone: {sum(size(n) for n in layers(48)) / GB:,.0f} GB")


if __name__ == "__main__":
    main()
