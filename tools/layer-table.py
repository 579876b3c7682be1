#!/usr/bin/env python3
"""Prints a Markdown table of the build figures in a database folder's
manifest.json: per layer positions, wall time, positions/s, the time split
between exits, envelope and score sweeps, settlements per position, peak
resident memory (total, and its anonymous part against the memory guard's
estimate), pinned fraction and the share of won/drawn/lost scores.

Usage: tools/layer-table.py DIR [FIRST [LAST]]
"""
import json
import sys


def main():
    d = sys.argv[1]
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    last = int(sys.argv[3]) if len(sys.argv) > 3 else 48
    m = json.load(open(f"{d}/manifest.json"))
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
