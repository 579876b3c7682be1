#!/usr/bin/env python3
"""Prints the size of a folder's compressed tables per layer, in bytes and
bits per position, from its manifest.json (the files it lists, counted
once each), and projects the size of layers 0..=48 from them.

Per layer: positions, the bytes of the compressed files listed for it, bits
per position, and which files (the full form `tables.n.zst`, the scores
alone `scores.n.zst`, ...). Totals for the ranges asked.

The projection of 0..=48 (layer 47 does not exist) takes the measured
layers as they are and gives each layer above them the bits per position
of the largest measured layer ("flat"), or the trend of the last eight
measured layers extended (a least-squares line in bits per position
against the layer, "trend"), times the layer's positions
(data/layer-sizes.csv; the VU dataset's extra initial position is left
out). Beside it: the VU dataset (one byte per position, 889 GB) and the
C++ solver of all 889 G Oware positions (202.9 GB of zstd blocks, 1.83 bits
per position; see docs/compression.md).

Usage: tools/compressed-size.py DIR [--sum A..=B]...
"""
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def layer_sizes():
    sizes = {}
    with open(os.path.join(HERE, "..", "data", "layer-sizes.csv")) as f:
        for row in csv.DictReader(f):
            sizes[int(row["seeds"])] = int(row["entries_in_scores_file"])
    return sizes


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    folder, sums = argv[0], []
    rest = argv[1:]
    while rest:
        if rest[0] == "--sum" and len(rest) > 1:
            a, b = rest[1].split("..=")
            sums.append((int(a), int(b)))
            rest = rest[2:]
        else:
            print(f"compressed-size: unknown argument {rest[0]}", file=sys.stderr)
            return 2
    with open(os.path.join(folder, "manifest.json")) as f:
        m = json.load(f)
    sizes = layer_sizes()
    files = {}
    for c in m.get("compressed", []):
        files.setdefault(c["seeds"], {})[c["name"]] = c["bytes"]
    layers = sorted(files)
    if not layers:
        print("compressed-size: the folder lists no compressed file", file=sys.stderr)
        return 1
    bits = {}
    print("| layer | positions | bytes | bits/position | files |")
    print("|---:|---:|---:|---:|---|")
    for n in layers:
        b = sum(files[n].values())
        bits[n] = 8 * b / sizes[n]
        print(f"| {n} | {sizes[n]:,} | {b:,} | {bits[n]:.3f} | {', '.join(sorted(files[n]))} |")
    for a, z in sums:
        ns = [n for n in layers if a <= n <= z]
        b = sum(sum(files[n].values()) for n in ns)
        p = sum(sizes[n] for n in ns)
        print(f"| {a}..={z} | {p:,} | {b:,} | {8 * b / max(p, 1):.3f} | {len(ns)} layers |")
    # Projection of 0..=48.
    top = max(layers)
    tail = layers[-8:]
    k = len(tail)
    mx = sum(tail) / k
    my = sum(bits[n] for n in tail) / k
    var = sum((n - mx) ** 2 for n in tail)
    slope = sum((n - mx) * (bits[n] - my) for n in tail) / var if var else 0.0
    total = {"flat": 0.0, "trend": 0.0}
    positions = 0
    for n in range(0, 49):
        if n == 47:
            continue
        positions += sizes[n]
        if n in bits:
            for key in total:
                total[key] += bits[n] * sizes[n] / 8
        else:
            total["flat"] += bits[top] * sizes[n] / 8
            trend = max(my + slope * (n - mx), 0.0)
            total["trend"] += trend * sizes[n] / 8
    print()
    print(f"Projection of 0..=48 ({positions:,} positions; measured layers "
          f"{layers[0]}..={top} as they are):")
    print(f"- flat (every layer above {top} at {bits[top]:.3f} bits/position): "
          f"{total['flat'] / 1e9:.1f} GB, {8 * total['flat'] / positions:.2f} bits/position")
    print(f"- trend (bits/position {slope:+.4f} per layer from the last {k} measured): "
          f"{total['trend'] / 1e9:.1f} GB, {8 * total['trend'] / positions:.2f} bits/position")
    print(f"- the VU dataset (1 byte per position): {positions / 1e9:.1f} GB")
    print("- the C++ solver of all 889 G Oware positions (one bound, zstd): 202.9 GB, 1.83 bits/position")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
