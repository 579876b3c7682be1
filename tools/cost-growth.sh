#!/usr/bin/env bash
# How the solver's cost grows with the layer (docs/performance.md): rebuilds
# every layer FROM..=TO of a finished folder DIR in increasing order, each
# once with --threads 1 and once with --threads 2 (in that order), and
# appends one CSV line per run to OUT (default cost-growth.csv):
#   layer,positions,threads,wall_seconds,ns_per_position,settlements_per_position,exits,envelope,score,write,scores_xxh3
# Each rebuild is tools/rebuild-layer.sh's (the layers from the rebuilt one
# up dropped from the manifest, that one built again on the lower ones), so the
# folder holds FROM..=TO again at the end, the same bytes (the scores'
# xxh3 of each run is printed for comparing with data/known-good.csv).
# Usage: tools/cost-growth.sh DIR FROM TO [OUT]   (AWARI names the binary)
set -euo pipefail
dir=$1 from=$2 to=$3 out=${4:-cost-growth.csv}
bin=${AWARI:-target/release/awari}
[ -s "$out" ] || echo "layer,positions,threads,wall_seconds,ns_per_position,settlements_per_position,exits,envelope,score,write,scores_xxh3" > "$out"
for n in $(seq "$from" "$to"); do
  [ "$n" = 47 ] && continue
  for threads in 1 2; do
    AWARI="$bin" "$(dirname "$0")/rebuild-layer.sh" "$dir" "$n" 1 --threads "$threads" > /dev/null
    python3 - "$dir" "$n" >> "$out" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
l = next(l for l in json.load(open(f"{d}/manifest.json"))["layers"] if l["seeds"] == n)
ph = l["phase_seconds"]
print(",".join(str(x) for x in [
    n, l["positions"], l["threads"], round(l["wall_seconds"], 3),
    round(l["wall_seconds"] / l["positions"] * 1e9, 2),
    round(l["settlements_per_position"], 4),
    *(round(ph.get(k, 0.0), 3) for k in ("exits", "envelope", "score", "write")),
    l["scores"]["xxh3"],
]))
PY
    tail -1 "$out"
  done
done
