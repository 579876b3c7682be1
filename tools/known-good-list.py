#!/usr/bin/env python3
"""Writes a list of known-good checksums (the format of data/known-good.csv)
from a folder's manifest.json: every table of every layer recorded, with the
`# rules: NAME` line of the folder's rule set.

    python3 tools/known-good-list.py DIR > data/known-good-abapa.csv

The manifest's checksums are those of the bytes the builder wrote; run
`awari check --db DIR` first, which verifies every table against them.
"""
import json
import sys

TAGS = {"awari-vu2002": "awari"}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: known-good-list.py DIR")
    m = json.load(open(sys.argv[1] + "/manifest.json"))
    rules = TAGS.get(m["rule_set"], m["rule_set"])
    print("# rules: %s" % rules)
    print("layer,table,bytes,xxh3")
    for layer in sorted(m["layers"], key=lambda l: l["seeds"]):
        for table in ("scores", "lower", "upper"):
            f = layer.get(table)
            if f:
                print("%d,%s,%d,%s" % (layer["seeds"], table, f["bytes"], f["xxh3"]))


if __name__ == "__main__":
    main()
