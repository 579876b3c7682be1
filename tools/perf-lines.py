#!/usr/bin/env python3
"""Where a `perf record` of the solver spent its samples, by source line and
by part of the solver, inlined frames resolved (the release build inlines
nearly everything, so `perf report --sort symbol` names only closures).

Usage: tools/perf-lines.py perf.data BINARY [TOP]

BINARY is the `awari` the profile ran (release, with debug info, as the
workspace builds it). Needs `perf` and `addr2line` (binutils). Prints the
TOP (default 30) innermost source lines of this project, then the share of
each part: the waves' generating and applying steps, the exits, the
threshold scans, `unrank_unchecked` (called out of line), the rest.
"""
import collections
import re
import subprocess
import sys


def text_vaddr(binary, pgoff):
    """The virtual address of file offset `pgoff` in BINARY's segments."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        # The executable segment; the mapping starts at its page.
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            off, vaddr, filesz = int(f[1], 16), int(f[2], 16), int(f[4], 16)
            page_off, page_vaddr = off & ~0xFFF, vaddr & ~0xFFF
            if page_off <= pgoff < off + filesz:
                return pgoff - page_off + page_vaddr
    sys.exit(f"no segment of {binary} holds offset {pgoff:#x}")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    data, binary = sys.argv[1], sys.argv[2]
    top = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    name = binary.rsplit("/", 1)[-1]
    script = subprocess.run(
        ["perf", "script", "-i", data, "--show-mmap-events", "-F", "ip,dso"],
        capture_output=True, text=True, check=True,
    ).stdout
    base = None
    counts = collections.Counter()
    total = 0
    for line in script.splitlines():
        m = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+) .*\]: r-xp (\S+)", line)
        if m and m.group(4).endswith("/" + name) and base is None:
            start, pgoff = int(m.group(1), 16), int(m.group(3), 16)
            base = start - text_vaddr(binary, pgoff)
            continue
        f = line.split()
        if len(f) == 2 and re.fullmatch(r"[0-9a-f]+", f[0]):
            total += 1
            if f[1].endswith(name + ")") or f[1].endswith(name):
                counts[int(f[0], 16)] += 1
    if base is None:
        sys.exit(f"no executable mapping of {name} in {data}")
    ips = list(counts)
    out = subprocess.run(
        ["addr2line", "-f", "-i", "-C", "-a", "-e", binary] + [hex(ip - base) for ip in ips],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    chains, cur = [], None
    for line in out:
        if re.fullmatch(r"0x[0-9a-f]+", line):
            cur = []
            chains.append(cur)
        else:
            cur.append(line)
    inner, part = collections.Counter(), collections.Counter()
    for ip, chain in zip(ips, chains):
        c = counts[ip]
        frames = list(zip(chain[0::2], chain[1::2]))
        ours = [loc.split("/src/", 1)[1] for _, loc in frames if "/src/" in loc and "/rustc/" not in loc]
        inner[ours[0] if ours else frames[0][0][:70]] += c
        where = " ".join(f"{fn} {loc}" for fn, loc in frames)
        if "exits.rs" in where:
            k = "exits pass"
        elif "Waves::generate" in where:
            k = "waves: generating"
        elif "Waves::apply" in where:
            k = "waves: applying"
        elif "unrank_unchecked" in where:
            k = "index::unrank_unchecked (out of line)"
        elif "sweep.rs" in where:
            k = "sweeps: scans and depth-first propagation"
        elif ours:
            k = "other: " + ours[-1].split(":")[0]
        else:
            k = "other: " + frames[0][0][:50]
        part[k] += c
    print(f"{total} samples, {sum(counts.values())} in {name}")
    print(f"\n== the {top} hottest source lines (innermost frame of this project)")
    for k, v in inner.most_common(top):
        print(f"{100 * v / total:6.2f}%  {k}")
    print("\n== by part")
    for k, v in part.most_common():
        if v < total / 1000:
            break
        print(f"{100 * v / total:6.2f}%  {k}")


if __name__ == "__main__":
    main()
