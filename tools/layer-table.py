#!/usr/bin/env python3
"""Prints a Markdown table of the build figures in a database folder's
manifest.json: per layer positions, wall time, positions/s, the time split
between exits, envelope and score sweeps, settlements per position, peak
resident memory (total, and its anonymous part against the memory guard's
estimate), pinned fraction and the share of won/drawn/lost scores.

With --io instead: per layer the solver, wall time and phases, peak memory,
the lower-layer bytes streamed, the scratch lists written, read and held at
most (compact solver; layers recorded before the field existed were built
in memory), and the layer's tables on disk (compressed, if they
are kept compressed).

Usage: tools/layer-table.py [--io] DIR [FIRST [LAST]]
"""
import json
import sys


GB = 1e9


def io_table(m, first, last):
    packed = {}
    for c in m.get("compressed", []):
        packed[c["seeds"]] = packed.get(c["seeds"], 0) + c["bytes"]
    print("| layer | positions | solver | seconds | exits / envelope / score / write s | peak anon. / RSS GiB | lower read GB | lists written / read / peak GB | tables on disk GB |")
    print("|---:|---:|---|---:|---|---:|---:|---:|---:|")
    for l in m["layers"]:
        n = l["seeds"]
        if not first <= n <= last:
            continue
        ph = l["phase_seconds"]
        io = l.get("io") or {}
        lists = "-"
        if io:
            lists = (f"{io['scratch_written_bytes'] / GB:.1f} / {io['scratch_read_bytes'] / GB:.1f}"
                     f" / {io['scratch_peak_bytes'] / GB:.1f}")
        lower = f"{io['lower_read_bytes'] / GB:.1f}" if io else "mapped"
        raw = sum(l[k]["bytes"] for k in ("scores", "lower", "upper") if l.get(k))
        disk = f"{packed[n] / GB:.2f} (raw {raw / GB:.2f})" if n in packed else f"{raw / GB:.2f}"
        print(
            f"| {n} | {l['positions']:,} | {l.get('solver') or 'in-memory'} | {l['wall_seconds']:.0f} "
            f"| {ph['exits']:.0f} / {ph['envelope']:.0f} / {ph['score']:.0f} / {ph['write']:.0f} "
            f"| {l['peak_anon_bytes'] / 2**30:.1f} / {l['peak_rss_bytes'] / 2**30:.1f} "
            f"| {lower} | {lists} | {disk} |"
        )


def main():
    args = sys.argv[1:]
    io = "--io" in args
    args = [a for a in args if a != "--io"]
    d = args[0]
    first = int(args[1]) if len(args) > 1 else 0
    last = int(args[2]) if len(args) > 2 else 48
    m = json.load(open(f"{d}/manifest.json"))
    if io:
        io_table(m, first, last)
        return
    print("| layer | positions | seconds | M pos/s | exits / envelope / score s | settl./pos | peak RSS MiB | anon. MiB / estimate | pinned | score >0 / 0 / <0 |")
    print("|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    total_pos = total_s = 0.0
    for l in m["layers"]:
        n = l["seeds"]
        if not first <= n <= last:
            continue
        ph = l["phase_seconds"]
        h = l["score_histogram"]
        pos = l["positions"]
        win = sum(h[n + 1:]) / pos
        draw = h[n] / pos
        loss = sum(h[:n]) / pos
        pinned = "-" if l.get("pinned") is None else f"{100 * l['pinned'] / pos:.1f}%"
        anon = "-"
        if l.get("estimate_bytes"):
            anon = f"{l['peak_anon_bytes'] / 2**20:.0f} / {l['estimate_bytes'] / 2**20:.0f}"
        total_pos += pos
        total_s += l["wall_seconds"]
        print(
            f"| {n} | {pos:,} | {l['wall_seconds']:.1f} | {l['positions_per_second'] / 1e6:.2f} "
            f"| {ph['exits']:.1f} / {ph['envelope']:.1f} / {ph['score']:.1f} "
            f"| {l['settlements_per_position']:.2f} | {l['peak_rss_bytes'] / 2**20:.0f} "
            f"| {anon} "
            f"| {pinned} | {100 * win:.0f}% / {100 * draw:.0f}% / {100 * loss:.0f}% |"
        )
    print(f"\nlayers {first}..={last}: {total_pos:,.0f} positions in {total_s:.1f} s of layer builds")


if __name__ == "__main__":
    main()
