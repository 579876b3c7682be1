#!/usr/bin/env python3
"""Table, plot and projection of how the solver's cost grows with the layer,
from the CSV of tools/cost-growth.sh.

    python3 tools/cost-growth.py [cost-growth.csv] [--manifest DIR ...]
        [--layers 20..=30] [--plot cost-growth.png] [--fit-from 20]
        [--fit-to 48] [--cores 64] [--efficiency E]

The runs come from the CSV, from the manifests of folders (`--manifest`,
repeated: each layer entry is a run with the threads it records, e.g. a
build from an empty folder), or from both; `--layers` keeps the manifests'
layers in a range.

Prints a markdown table (per layer: positions, ns per position on 1 and 2
threads, the scaling, settlements per position, the share of each phase on
2 threads), then the projection, with its model:

  * core-ns per position on 2 threads (wall x 2 / positions) grows with
    the layer; it is fitted as a + b * log2(positions) over the layers
    from --fit-from on, and extended to 31..=48;
  * a layer's time on C cores is positions x core-ns / (C x efficiency);
    the efficiency (default: the measured 2-thread scaling per doubling,
    raised to log2(C / 2)) stands for everything a larger machine or a
    cluster adds (messages, imbalance); I/O, memory and network are not
    modelled (tools/projection.py does that for the compact solver).

--plot draws ns per position against the layer (1 and 2 threads, and the
fit extended), with settlements per position on the right axis (needs
matplotlib).
"""
import argparse
import csv
import json
import math
import os
import statistics
from collections import defaultdict


def layer_sizes():
    """Positions per layer, from the repository's data/layer-sizes.csv."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "layer-sizes.csv")
    with open(path) as f:
        return {int(r["seeds"]): int(r["entries_in_scores_file"]) for r in csv.DictReader(f)}


SIZES = layer_sizes()


def layer_size(n):
    return SIZES[n]


def manifest_rows(d):
    """The layer entries of folder d's manifest.json as rows of the CSV."""
    with open(os.path.join(d, "manifest.json")) as f:
        layers = json.load(f)["layers"]
    for l in layers:
        if not l.get("wall_seconds") or not l.get("threads"):
            continue
        ph = l.get("phase_seconds", {})
        row = {
            "layer": l["seeds"],
            "threads": l["threads"],
            "wall_seconds": l["wall_seconds"],
            "ns_per_position": l["wall_seconds"] / l["positions"] * 1e9,
            "settlements_per_position": l.get("settlements_per_position", 0.0),
        }
        row.update({k: ph.get(k, 0.0) for k in ("exits", "envelope", "score", "write")})
        yield row


def fit(xs, ys):
    """Least squares y = a + b x."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def hours(s):
    return f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.1f} min"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="?")
    ap.add_argument("--manifest", action="append", default=[])
    ap.add_argument("--layers", default="20..=48")
    ap.add_argument("--fit-to", type=int, default=48)
    ap.add_argument("--plot")
    ap.add_argument("--fit-from", type=int, default=20)
    ap.add_argument("--cores", type=int, default=64)
    ap.add_argument("--efficiency", type=float)
    args = ap.parse_args()
    runs = defaultdict(list)  # (layer, threads) -> rows
    if args.csv:
        for row in csv.DictReader(open(args.csv)):
            runs[int(row["layer"]), int(row["threads"])].append(row)
    lo, hi = (int(x) for x in args.layers.split("..="))
    for d in args.manifest:
        for row in manifest_rows(d):
            if lo <= row["layer"] <= hi:
                runs[row["layer"], row["threads"]].append(row)

    def med(n, t, key):
        rows = runs.get((n, t))
        return statistics.median(float(r[key]) for r in rows) if rows else None

    layers = sorted({n for n, _ in runs})
    print("| layer | positions | ns/position, 1 thread | 2 threads | scaling | settlements/position "
          "| exits / envelope / score / write, 2 threads |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    scal = []
    for n in layers:
        one, two = med(n, 1, "ns_per_position"), med(n, 2, "ns_per_position")
        s = one / two if one and two else None
        if s:
            scal.append(s)
        sp = med(n, 2, "settlements_per_position") or med(n, 1, "settlements_per_position")
        wall = med(n, 2, "wall_seconds")
        ph = " / ".join(f"{100 * med(n, 2, k) / wall:.0f}%" for k in ("exits", "envelope", "score", "write")) if wall else "-"
        print(f"| {n} | {layer_size(n):,} | {one or float('nan'):.1f} | {two or float('nan'):.1f} | "
              f"{s or float('nan'):.2f}x | {sp:.3f} | {ph} |")

    fitted = [n for n in layers
              if args.fit_from <= n <= args.fit_to and med(n, 2, "ns_per_position")]
    xs = [math.log2(layer_size(n)) for n in fitted]
    ys = [2 * med(n, 2, "ns_per_position") for n in fitted]
    a, b = fit(xs, ys)
    core_ns = lambda n: a + b * math.log2(layer_size(n))
    per_doubling = statistics.median(scal) / 2 if scal else 1.0
    eff = args.efficiency or per_doubling ** math.log2(args.cores / 2)
    print()
    scaling = (f"2-thread scaling {statistics.median(scal):.2f}x (median), so efficiency "
               f"{per_doubling:.3f} per doubling" if scal else "no 1-thread runs to scale by")
    print(f"fit over layers {fitted[0]}..={fitted[-1]} (2 threads): core-ns per position = "
          f"{a:.1f} + {b:.2f} x log2(positions); {scaling}; efficiency {eff:.2f} on {args.cores} cores")
    print()
    print(f"| layer | positions | core-ns/position (fit) | 2 cores | {args.cores} cores |")
    print("|---:|---:|---:|---:|---:|")
    total2 = total_c = 0.0
    for n in range(0, 49):
        if n == 47:
            continue
        measured = med(n, 2, "wall_seconds")
        t2 = measured if measured is not None else layer_size(n) * core_ns(n) / 2e9
        tc = layer_size(n) * (2 * (measured / layer_size(n) * 1e9) if measured else core_ns(n)) / (args.cores * eff) / 1e9
        total2 += t2
        total_c += tc
        if n >= 27 and (n <= 31 or n % 4 == 0 or n == 48):
            print(f"| {n} | {layer_size(n):,} | {core_ns(n):.0f} | {hours(t2)} | {hours(tc)} |")
    print()
    print(f"0..=48: {hours(total2)} on 2 cores (were the memory there), "
          f"{hours(total_c)} on {args.cores} cores at efficiency {eff:.2f}")

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 4.5))
        for t, style in ((1, "o-"), (2, "s-")):
            pts = [(n, med(n, t, "ns_per_position")) for n in layers if med(n, t, "ns_per_position")]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{t} thread{'s' if t > 1 else ''}")
        ext = [n for n in range(fitted[0], 33)]
        ax.plot(ext, [core_ns(n) / 2 for n in ext], "--", color="gray", label="fit, 2 threads")
        ax.set_xlabel("layer (seeds on the board)")
        ax.set_ylabel("ns per position (wall)")
        ax.set_ylim(bottom=0)
        ax2 = ax.twinx()
        sp = [(n, med(n, 2, "settlements_per_position")) for n in layers if med(n, 2, "settlements_per_position")]
        ax2.plot([p[0] for p in sp], [p[1] for p in sp], "^:", color="tab:green", label="settlements per position")
        ax2.set_ylabel("settlements per position")
        ax2.set_ylim(bottom=0)
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, loc="lower right")
        ax.set_title("In-memory solver: cost per position by layer")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
