#!/usr/bin/env bash
# Rebuilds the top layer of a finished database folder REPS times and prints
# its wall time and phase split each time (a quick A/B benchmark of the
# solver). Usage: tools/rebuild-layer.sh DIR LAYER [REPS] [extra build args]
# AWARI names the binary; for an MPI build, a script that runs
# `mpirun -np N awari "$@" --mpi`.
set -euo pipefail
dir=$1 layer=$2 reps=${3:-3}
shift 3 || shift $#
bin=${AWARI:-target/release/awari}
for _ in $(seq "$reps"); do
  python3 - "$dir" "$layer" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
m = json.load(open(f"{d}/manifest.json"))
m["layers"] = [l for l in m["layers"] if l["seeds"] < n]
m["compressed"] = [c for c in m.get("compressed", []) if c["seeds"] < n]
json.dump(m, open(f"{d}/manifest.json", "w"), indent=1)
PY
  # A build does not write over tables its manifest does not list: the
  # dropped layers' tables go first.
  for k in $(seq "$layer" 48); do rm -f "$dir"/{scores,lower,upper,dist}."$k"{,.zst}; done
  "$bin" build --max-seeds "$layer" --out "$dir" -q "$@"
  python3 - "$dir" "$layer" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
l = next(l for l in json.load(open(f"{d}/manifest.json"))["layers"] if l["seeds"] == n)
ph = " ".join(f"{k} {v:.2f}" for k, v in l["phase_seconds"].items())
sent = l.get("io", {}).get("sent_bytes", 0)
extra = f" ranks {l['ranks']} sent {sent / l['positions']:.1f} B/position" if l.get("ranks") else ""
print(f"layer {n}: {l['wall_seconds']:.2f} s ({l['positions_per_second']/1e6:.2f} M/s) [{ph}] threads {l['threads']}{extra} scores {l['scores']['xxh3']}")
PY
done
