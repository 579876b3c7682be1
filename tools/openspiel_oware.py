#!/usr/bin/env python3
"""Random games of OpenSpiel's `oware` (the abapa rule set), every ply printed,
for comparing another move generator with it (tests/openspiel.rs).

    python3 tools/openspiel_oware.py --games G [--seed S]

needs `pyspiel` (PyPI package open_spiel; `pip install --no-deps
open_spiel==2.0.2` is enough). Every game starts from the opening; each side
plays a uniformly random legal move. Output, one record per line:

    G <game>
    P <player> <12 pits> <captured by player 0> <captured by player 1> <legal> <move>
    T <final 0> <final 1>

The pits are absolute, in sowing order: player 0's houses 0..5, then player
1's 0..5 (seen from the mover: rotate by 6 * player). <legal> lists the legal
moves as houses 0..5 of the mover, comma-separated, and <move> is the one
played; a P line of a finished game has "- -" there. OpenSpiel ends a game
when a side has more than 24 seeds or both have 24, when the side to move has
no legal move, or when a position repeats since the last capture; at every end
each side takes the seeds left in its own row (so the last P line shows an
empty board and the final captures, which T repeats).
"""
import argparse
import random
import sys

import pyspiel


def board(state):
    """OpenSpiel's observation string is '<player> | <c0> <c1> | <12 pits>'."""
    player, captured, pits = state.observation_string(0).split(" | ")
    return int(player), captured.split(), pits.split()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    game = pyspiel.load_game("oware")
    rng = random.Random(args.seed)
    out = sys.stdout
    for g in range(args.games):
        out.write("G %d\n" % g)
        state = game.new_initial_state()
        # OpenSpiel refuses a 1000th move; random games end far sooner.
        while not state.is_terminal() and len(state.history()) < 999:
            player, captured, pits = board(state)
            legal = state.legal_actions()
            move = rng.choice(legal)
            out.write("P %d %s %s %s %d\n" % (player, " ".join(pits), " ".join(captured),
                                              ",".join(map(str, legal)), move))
            state.apply_action(move)
        player, captured, pits = board(state)
        out.write("P %d %s %s - -\n" % (player, " ".join(pits), " ".join(captured)))
        if state.is_terminal():
            out.write("T %s\n" % " ".join(captured))


if __name__ == "__main__":
    main()
