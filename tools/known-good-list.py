#!/usr/bin/env python3
"""Writes a list of known-good checksums (the format of data/known-good.csv)
from a folder's manifest.json: every table of every layer recorded, with the
`# rules: NAME` line of the folder's rule set.

    python3 tools/known-good-list.py DIR > data/known-good-abapa.csv

With `--merge LIST`, the list LIST with the folder's tables that it lacks
(the distance tables of layers built with them, say) added after the rows
of their layer; the rows LIST has are kept, and must agree with the
folder's:

    python3 tools/known-good-list.py DIR --merge data/known-good.csv > new.csv

The manifest's checksums are those of the bytes the builder wrote; run
`awari check --db DIR` first, which verifies every table against them (and
each distance table against its recurrence).
"""
import json
import sys

TAGS = {"awari-vu2002": "awari"}
TABLES = ("scores", "lower", "upper", "dist")


def rows(m):
    """(layer, table) -> row text, in the order of the layers and tables."""
    out = {}
    for layer in sorted(m["layers"], key=lambda l: l["seeds"]):
        for table in TABLES:
            f = layer.get(table)
            if f:
                out[(layer["seeds"], table)] = "%d,%s,%d,%s" % (
                    layer["seeds"],
                    table,
                    f["bytes"],
                    f["xxh3"],
                )
    return out


def merge(listed, folder):
    """The lines of the list `listed` with the rows of `folder` it lacks."""
    have = {}
    lines = listed.read().splitlines()
    for line in lines:
        f = line.split(",")
        if len(f) == 4 and f[0].isdigit():
            have[(int(f[0]), f[1])] = line
    for key, row in folder.items():
        if key in have and have[key] != row:
            sys.exit("the folder's %s.%d is not the list's: %s, not %s" % (key[1], key[0], row, have[key]))
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        f = line.split(",")
        if len(f) != 4 or not f[0].isdigit():
            continue
        n = int(f[0])
        nxt = lines[i + 1].split(",") if i + 1 < len(lines) else []
        if len(nxt) == 4 and nxt[0].isdigit() and int(nxt[0]) == n:
            continue
        # The last row of layer n: the folder's rows the list lacks.
        for t in TABLES:
            if (n, t) in folder and (n, t) not in have:
                out.append(folder[(n, t)])
    return out


def main():
    args = sys.argv[1:]
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--merge"):
        sys.exit("usage: known-good-list.py DIR [--merge LIST]")
    m = json.load(open(args[0] + "/manifest.json"))
    folder = rows(m)
    if len(args) == 3:
        with open(args[2]) as listed:
            print("\n".join(merge(listed, folder)))
        return
    print("# rules: %s" % TAGS.get(m["rule_set"], m["rule_set"]))
    print("layer,table,bytes,xxh3")
    for row in folder.values():
        print(row)


if __name__ == "__main__":
    main()
