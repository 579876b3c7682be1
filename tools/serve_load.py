#!/usr/bin/env python3
"""The web oracle's figures (docs/serve.md): start-up to first answer, a
batch of 10,000 boards, and single-position requests from 64 connections
driven by wrk (Debian's `wrk` package).

    python3 tools/serve_load.py --awari target/release/awari --db DB \
        [--requests 100000] [--runs 3]

Every figure is a median over the runs. The positions are random boards of
the folder's layers (uniform over the pits' counts, re-drawn until they
have a Goedel number), the same for every run (seeded).
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def board(rng, n):
    """A random board of n seeds with a Goedel number (the opponent's six
    pits are not all full)."""
    while True:
        cuts = sorted(rng.randint(0, n) for _ in range(11))
        pits = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        if 0 in pits[6:]:
            return pits


def start(awari, db):
    """Starts `awari serve` on a free port: the process, its address and the
    seconds from the start to its first answer."""
    t = time.perf_counter()
    p = subprocess.Popen(
        [awari, "serve", "--db", db, "--listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = p.stdout.readline()
    addr = re.search(r"http://([^/]+)/", line).group(1)
    url = f"http://{addr}/api/v1/position?pits=1,1,1,1,1,2,4,2,3,0,0,0"
    while True:
        try:
            urllib.request.urlopen(url).read()
            break
        except OSError:
            time.sleep(0.001)
    return p, addr, time.perf_counter() - t


def post(addr, body):
    """POSTs body to /api/v1/positions; the seconds it took."""
    req = urllib.request.Request(
        f"http://{addr}/api/v1/positions", data=body, method="POST"
    )
    t = time.perf_counter()
    out = json.loads(urllib.request.urlopen(req).read())
    took = time.perf_counter() - t
    assert len(out["scores"]) == 10_000
    return took


def wrk(addr, paths, requests, rate_guess=20_000):
    """Runs wrk with 64 connections on 2 threads long enough for about
    `requests` requests; its rate, p50, p99, total and errors."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write("paths = {\n")
        f.writelines(f'  "{p}",\n' for p in paths)
        f.write("}\ni = 0\n")
        f.write(
            "request = function()\n  i = i % #paths + 1\n"
            "  return wrk.format(\"GET\", paths[i])\nend\n"
        )
        f.write(
            "done = function(summary, latency, requests)\n"
            "  io.write(string.format(\"ERRORS %d %d %d %d %d\\n\", summary.errors.connect,"
            " summary.errors.read, summary.errors.write, summary.errors.status,"
            " summary.errors.timeout))\nend\n"
        )
        script = f.name
    secs = max(5, round(requests / rate_guess))
    out = subprocess.run(
        ["wrk", "-t2", "-c64", f"-d{secs}s", "--latency", "-s", script, f"http://{addr}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    os.unlink(script)

    def ms(label):
        m = re.search(rf"^\s*{label}\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        v = float(m.group(1))
        return {"us": v / 1000, "ms": v, "s": v * 1000}[m.group(2)]

    total = int(re.search(r"(\d+) requests in", out).group(1))
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = sum(int(x) for x in re.search(r"ERRORS ([\d ]+)", out).group(1).split())
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors += int(non2xx.group(1)) if non2xx else 0
    return rate, ms("50%"), ms("99%"), total, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--awari", default="target/release/awari")
    ap.add_argument("--db", required=True)
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    health = None
    rng = random.Random(34)
    p, addr, _ = start(a.awari, a.db)
    with urllib.request.urlopen(f"http://{addr}/api/v1/health") as r:
        health = json.loads(r.read())
    p.terminate()
    p.wait()
    layers = [n for n in health["layers"] if n != 47]
    paths = []
    for _ in range(20_000):
        pits = board(rng, rng.choice(layers))
        paths.append("/api/v1/position?pits=" + ",".join(map(str, pits)))
    boards = [board(rng, rng.choice(layers)) for _ in range(10_000)]
    body = json.dumps({"boards": boards}).encode()

    starts, batches, loads = [], [], []
    for run in range(a.runs):
        p, addr, startup = start(a.awari, a.db)
        starts.append(startup)
        post(addr, body)  # the layers' first probes
        batches.append(statistics.median(post(addr, body) for _ in range(21)))
        loads.append(wrk(addr, paths, a.requests))
        p.terminate()
        assert p.wait(timeout=10) == 0, "awari serve exits 0 on SIGTERM"
        print(
            f"run {run + 1}: start-up {startup * 1e3:.0f} ms, batch of 10,000 "
            f"{batches[-1] * 1e3:.1f} ms, wrk {loads[-1][0]:.0f} req/s p50 "
            f"{loads[-1][1]:.2f} ms p99 {loads[-1][2]:.2f} ms, {loads[-1][3]} requests, "
            f"{loads[-1][4]} errors",
            flush=True,
        )
    med = lambda xs: statistics.median(xs)
    print(
        f"medians over {a.runs} runs, layers {layers[0]}..={layers[-1]}: start-up to first "
        f"answer {med(starts) * 1e3:.0f} ms; batch of 10,000 boards {med(batches) * 1e3:.1f} ms; "
        f"64 connections {med(l[0] for l in loads):.0f} req/s, p50 "
        f"{med(l[1] for l in loads):.2f} ms, p99 {med(l[2] for l in loads):.2f} ms, "
        f"errors {sum(l[4] for l in loads)} in {sum(l[3] for l in loads)} requests"
    )


if __name__ == "__main__":
    sys.exit(main())
