#!/usr/bin/env python3
"""Games of our player (`awari play --protocol`) against OpenSpiel's oware bots.

    python3 tools/openspiel_match.py --awari target/release/awari --db ABAPA_DIR \\
        [--games 100] [--clock 1m] [--bot mcts --simulations 10000 | --bot alphabeta --depth 4]
        [--openings data/openings.txt] [--records DIR] [--jobs 2] [--seed 0]

OpenSpiel's game (`pyspiel.load_game("oware")`, PyPI package open_spiel; `pip
install --no-deps open_spiel==2.0.2` is enough) is the referee: it holds the board, ends the game and scores it.
Its rules are abapa (a grand slam captures nothing, feeding is mandatory), so
our player needs a folder of abapa tables. They differ from our abapa in two
ends: OpenSpiel ends a game at the first repetition of a position since the
last capture and after 1,000 moves, and at every end each side takes the seeds
of its own row.

The line protocol: our process reads one move label per line (A..F South, a..f
North) and prints `info ...` lines while it searches, `move L` for its move and
`end SENTENCE` when its own rules end the game; `quit` ends it. OpenSpiel's
actions are the mover's houses 0..5: house h is label A+h for player 0 (South,
moving first) and a+h for player 1 (North).

Game k (from 0) plays opening k // 2 of the list (cycling), our player taking
South in even games and North in odd ones. Prints a line per game, then our
wins, draws and losses, the score, the Elo difference with a 95% margin, and the
time our player used (per game: median and most; per move: most). Exit status 0
when every game was played, 1 when our player broke the protocol or ran out of
time, 2 on bad arguments.
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

import pyspiel


def label(player, house):
    return chr((ord("A") if player == 0 else ord("a")) + house)


def house(lbl):
    return ord(lbl) - (ord("A") if lbl.isupper() else ord("a"))


def read_openings(path):
    out = []
    with open(path) as f:
        for i, raw in enumerate(f, 1):
            line = raw.split("#")[0].strip()
            if not line:
                continue
            out.append([] if line == "start" else line.split())
    if not out:
        sys.exit("openspiel_match.py: %s: no openings" % path)
    return out


def make_bot(args, game, seed):
    if args.bot == "mcts":
        evaluator = pyspiel.RandomRolloutEvaluator(1, seed)
        # uct_c 2, max_simulations, max_memory_mb, solve, seed, verbose
        return pyspiel.MCTSBot(game, evaluator, 2.0, args.simulations, 1000, False, seed, False)
    return None


def alphabeta_move(game, state, depth):
    from open_spiel.python.algorithms import minimax

    me = state.current_player()

    def value(s):
        # Seeds captured by player 0 minus player 1, as a share of 48.
        _, captured, _ = s.observation_string(0).split(" | ")
        c0, c1 = map(int, captured.split())
        return (c0 - c1) / 48.0

    _, action = minimax.alpha_beta_search(game, state, value, depth, me)
    return action


class Engine:
    """Our player, one process per game."""

    def __init__(self, args, side, opening, record):
        self.start = tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False)
        self.start.write("rules abapa\nstart 4 4 4 4 4 4 4 4 4 4 4 4 captured 0 0\n")
        self.start.write("".join(m + "\n" for m in opening))
        self.start.close()
        cmd = [args.awari, "play", "--protocol", "--db", args.db, "--game", self.start.name,
               "--computer", side, "--clock", args.clock, "--threads", str(args.threads)]
        if record:
            cmd += ["--record", record]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        self.info = None

    def reply(self):
        """Our move's label, or None when our process ended the game."""
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("awari play stopped: %s" % self.p.stderr.read().strip())
            line = line.strip()
            if line.startswith("info "):
                self.info = line[5:]
            elif line.startswith("move "):
                return line[5:]
            elif line.startswith("end "):
                self.end = line[4:]
                return None
            else:
                raise RuntimeError("awari play printed %r" % line)

    def tell(self, lbl):
        self.p.stdin.write(lbl + "\n")
        self.p.stdin.flush()

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        self.p.wait(timeout=30)
        os.unlink(self.start.name)


def play_game(job):
    args, k, opening = job
    game = pyspiel.load_game("oware")
    state = game.new_initial_state()
    for m in opening:
        state.apply_action(house(m))
    ours = 0 if k % 2 == 0 else 1
    side = "south" if ours == 0 else "north"
    record = os.path.join(args.records, "game-%03d.txt" % (k + 1)) if args.records else None
    bot = make_bot(args, game, args.seed + k)
    eng = Engine(args, side, opening, record)
    times = []
    ended_by_us = None
    try:
        while not state.is_terminal() and len(state.history()) < 999:
            player = state.current_player()
            if player == ours:
                t = time.monotonic()
                lbl = eng.reply()
                times.append(time.monotonic() - t)
                if lbl is None:
                    ended_by_us = eng.end
                    break
                a = house(lbl)
                if lbl != label(player, a) or a not in state.legal_actions():
                    raise RuntimeError("our move %s is not legal for OpenSpiel" % lbl)
            else:
                if args.bot == "mcts":
                    a = bot.step(state)
                else:
                    a = alphabeta_move(game, state, args.depth)
                eng.tell(label(player, a))
            state.apply_action(a)
    finally:
        eng.close()
    _, captured, _ = state.observation_string(0).split(" | ")
    c = list(map(int, captured.split()))
    if state.is_terminal():
        r = state.returns()[ours]
        points = 1.0 if r > 0 else 0.5 if r == 0 else 0.0
        how = "OpenSpiel's end"
    else:
        # Our rules ended it first (or OpenSpiel's move limit): the seeds
        # captured so far decide, each side taking its own row as OpenSpiel does.
        _, _, pits = state.observation_string(0).split(" | ")
        pits = list(map(int, pits.split()))
        c = [c[0] + sum(pits[:6]), c[1] + sum(pits[6:])]
        points = 1.0 if c[ours] > c[1 - ours] else 0.5 if c[0] == c[1] else 0.0
        how = "ours: %s" % ended_by_us if ended_by_us else "1,000 moves"
        if ended_by_us and "ran out of time" in ended_by_us:
            points = 0.0
    return {"k": k, "side": side, "opening": opening, "points": points, "captured": c,
            "moves": len(state.history()), "times": times, "how": how,
            "flag": bool(ended_by_us and "ran out of time" in ended_by_us)}


def elo(s):
    return -400.0 * math.log10(1.0 / s - 1.0)


def rating(points):
    n = len(points)
    s = sum(points) / n
    var = sum((x - s) ** 2 for x in points) / n
    se = math.sqrt(var / n) if var > 0 else 3.0 / n / 1.96

    def at(x):
        return float("-inf") if x <= 0 else float("inf") if x >= 1 else elo(x)

    return s, at(s), at(s - 1.96 * se), at(s + 1.96 * se)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--awari", default="target/release/awari")
    ap.add_argument("--db", required=True, help="a folder of abapa tables")
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--clock", default="1m", help="our player's time per game")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--bot", choices=["mcts", "alphabeta"], default="mcts")
    ap.add_argument("--simulations", type=int, default=10000)
    ap.add_argument("--depth", type=int, default=4, help="plies of OpenSpiel's alpha-beta")
    ap.add_argument("--openings", help="a file of openings (default: the start)")
    ap.add_argument("--records", help="write our record of every game here")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.games < 1 or args.jobs < 1:
        ap.error("--games and --jobs must be at least 1")
    openings = read_openings(args.openings) if args.openings else [[]]
    if args.records:
        os.makedirs(args.records, exist_ok=True)
    bot = ("MCTS, %d simulations a move, random rollouts" % args.simulations if args.bot == "mcts"
           else "alpha-beta, %d plies, seeds captured as the value" % args.depth)
    print("openspiel match: %d games, ours (clock %s) against OpenSpiel %s" % (args.games, args.clock, bot),
          flush=True)
    jobs = [(args, k, openings[(k // 2) % len(openings)]) for k in range(args.games)]
    results = []
    with ProcessPoolExecutor(max_workers=args.jobs) as ex:
        for r in ex.map(play_game, jobs):
            results.append(r)
            pts = [x["points"] for x in results]
            print("game %d/%d (ours %s; opening %s): %s, %d moves, captured %d-%d (%s); our time %.1f s, "
                  "longest move %.2f s; so far %.1f/%d" % (
                      r["k"] + 1, args.games, r["side"], " ".join(r["opening"]) or "start",
                      {1.0: "we win", 0.5: "a draw", 0.0: "we lose"}[r["points"]], r["moves"],
                      r["captured"][0], r["captured"][1], r["how"], sum(r["times"]),
                      max(r["times"], default=0.0), sum(pts), len(pts)), flush=True)
    pts = [x["points"] for x in results]
    s, e, lo, hi = rating(pts)
    w = pts.count(1.0)
    d = pts.count(0.5)
    fmt = lambda x: ("%+.0f" % x) if math.isfinite(x) else ("+inf" if x > 0 else "-inf")
    print("result: +%d =%d -%d of %d: we score %.1f points (%.1f%%); Elo ours - OpenSpiel %s (95%%: %s .. %s)"
          % (w, d, len(pts) - w - d, len(pts), sum(pts), 100 * s, fmt(e), fmt(lo), fmt(hi)))
    per_game = [sum(x["times"]) for x in results]
    print("our time: median %.1f s per game, most %.1f s; longest move %.2f s; out of time in %d game(s)" % (
        statistics.median(per_game), max(per_game), max(max(x["times"], default=0) for x in results),
        sum(x["flag"] for x in results)))
    return 1 if any(x["flag"] for x in results) else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:
        print("openspiel_match.py: %s" % e, file=sys.stderr)
        sys.exit(1)
