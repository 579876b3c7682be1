#!/bin/bash
# Time to depth D (default 17) of the player's search from the start and three
# openings, one and two threads alternating, R rounds (default 3):
#   DB=DIR [D=19] [R=3] [BIN=target/release/awari] tools/time-to-depth.sh
# prints the `info depth D` line of each search (its time is the time to depth).
BIN=${BIN:-target/release/awari}
DB=${DB:?set DB to a folder of awari tables}
D=${D:-17}
R=${R:-3}
for r in $(seq $R); do
  for t in 1 2; do
    for op in "" "A f" "C d" "F a B" ; do
      rec=$(mktemp); printf 'rules awari\nstart 4 4 4 4 4 4 4 4 4 4 4 4\n' > $rec
      for m in $op; do echo $m >> $rec; done
      side=south; [ $(echo $op | wc -w) -eq 1 -o $(echo $op | wc -w) -eq 3 ] && side=north
      line=$(echo quit | $BIN play --protocol --db $DB --game $rec --computer $side --clock none --depth $D --threads $t --hash 256 | grep "^info depth $D ")
      echo "round $r threads $t opening '${op:-start}': $line"
      rm $rec
    done
  done
done
