"""OpenSpiel's ``oware`` states as this package's boards, and back.

OpenSpiel (PyPI ``open_spiel``, module ``pyspiel``) plays oware by the abapa
rules: a grand slam captures nothing, feeding an empty opponent is
mandatory, and a side that cannot feed ends the game. Its state keeps the 12
houses in absolute order (player 0's houses 0..5, then player 1's), the
seeds each player captured and the player to move. Our boards are seen from
the side to move (its pits 0..5 first), so a board is the houses rotated by
6 for player 1. OpenSpiel's action for the mover is a house 0..5 of the
mover's own row: the same number as our pit (label "A".."F").

>>> import pyspiel, awari_egdb
>>> from awari_egdb import openspiel
>>> db = awari_egdb.Database("abapa-db")      # built with --rules abapa
>>> state = pyspiel.load_game("oware").new_initial_state()
>>> ...                                       # play until few seeds are left
>>> openspiel.board(state)                    # Board(pits, player, captured)
>>> openspiel.value(db, state)                # player 0's margin with best play
>>> openspiel.returns(db, state)              # what state.returns() will be
>>> openspiel.best_actions(db, state)         # the actions that keep it

A score of the tables counts the seeds still on the board; `value` adds
what each side captured already, so that its sign is the winner with best
play. A position whose value is not pinned (``Database.envelope`` gives
lower < upper) depends on how endless play is scored; OpenSpiel ends a game
at the first repetition of a board since the last capture, each side taking
the seeds of its own row. The folder must be built with ``--rules abapa``:
one of another rule set is refused (ValueError), since its values are not
OpenSpiel's.

The module does not import ``pyspiel``: it reads a state through its
``observation_string`` and ``is_terminal`` methods, and OpenSpiel cannot set
up an arbitrary board, so "back" is OpenSpiel's observation of a board
(`observation`, equal to ``state.observation_string(0)``) and its houses
(`houses`).
"""

from typing import List, NamedTuple, Sequence, SupportsIndex, Tuple

HOUSES = 6
"""Houses per player; OpenSpiel's ``num_houses_per_player`` must be 6."""


class Board(NamedTuple):
    """A board of OpenSpiel's oware as this package sees it."""

    pits: List[int]
    """12 pit counts, the side to move's pits 0..5 first."""
    player: int
    """OpenSpiel's player to move, 0 or 1."""
    captured: Tuple[int, int]
    """Seeds captured so far by the side to move, and by the other side."""


def _parse(text: str) -> Tuple[int, List[int], List[int]]:
    """OpenSpiel's observation '<player> | <score 0> <score 1> | <12 houses>'."""
    try:
        player_text, score_text, seeds_text = text.split(" | ")
        player = int(player_text)
        score = [int(x) for x in score_text.split()]
        seeds = [int(x) for x in seeds_text.split()]
    except ValueError:
        raise ValueError(f"not an observation of OpenSpiel's oware: {text!r}") from None
    if player not in (0, 1) or len(score) != 2 or len(seeds) != 2 * HOUSES:
        raise ValueError(
            f"not an observation of OpenSpiel's oware with {HOUSES} houses a side: {text!r}"
        )
    if min(score + seeds) < 0:
        raise ValueError(f"a negative count in an observation of oware: {text!r}")
    return player, score, seeds


def _pits(pits: Sequence[SupportsIndex]) -> List[int]:
    out = [int(x) for x in pits]
    if len(out) != 2 * HOUSES or min(out) < 0:
        raise ValueError(f"a board is 12 pit counts, each at least 0, not {out}")
    return out


def board(state) -> Board:
    """The board of an OpenSpiel oware state, seen from the player to move.

    Raises ValueError when the state is not one of oware with 6 houses a
    side. A finished game's board is what OpenSpiel left on it (empty when
    the seeds were collected)."""
    player, score, seeds = _parse(state.observation_string(0))
    shift = HOUSES * player
    return Board(seeds[shift:] + seeds[:shift], player, (score[player], score[1 - player]))


def houses(pits: Sequence[SupportsIndex], player: int) -> List[int]:
    """The 12 houses in OpenSpiel's order (player 0's first) of a board
    whose side to move is OpenSpiel's `player`."""
    if player not in (0, 1):
        raise ValueError(f"OpenSpiel's oware has players 0 and 1, not {player}")
    p = _pits(pits)
    shift = HOUSES * player
    return p[2 * HOUSES - shift :] + p[: 2 * HOUSES - shift]


def observation(
    pits: Sequence[SupportsIndex], player: int, captured: Tuple[int, int] = (0, 0)
) -> str:
    """OpenSpiel's observation string of a board (what
    ``state.observation_string(0)`` gives for a state with that board, that
    player to move and those captures: the side to move's first)."""
    seeds = houses(pits, player)
    score = [0, 0]
    score[player], score[1 - player] = int(captured[0]), int(captured[1])
    return f"{player} | {score[0]} {score[1]} | " + " ".join(map(str, seeds))


def _answer(db, pits: List[int]) -> dict:
    """Score and best pits (a board without a Goedel number, every opponent
    pit holding seeds, is answered from its moves); a folder of another
    rule set than OpenSpiel's is refused."""
    if db.rules != "abapa":
        raise ValueError(
            f"{db.path} holds {db.rules} tables; OpenSpiel's oware plays the abapa rules "
            "(build a folder with `awari build --rules abapa`)"
        )
    return {"score": db.score(pits), "best": db.best(pits)}


def value(db, state) -> int:
    """Player 0's final margin (its seeds minus player 1's) with best play
    from `state`, by the tables of `db`: the captures so far plus the score
    of the board. For a finished game, the difference of the captures.

    Raises FileNotFoundError when the board's layer is not in the folder."""
    b = board(state)
    margin = b.captured[0] - b.captured[1]
    if not state.is_terminal():
        margin += _answer(db, b.pits)["score"]
    return margin if b.player == 0 else -margin


def returns(db, state) -> List[float]:
    """What OpenSpiel's ``state.returns()`` is at the end of a game played
    from `state` with best play: [1, -1] when player 0 wins, [-1, 1] when
    player 1 does, [0, 0] for a draw."""
    v = value(db, state)
    return [float((v > 0) - (v < 0)), float((v < 0) - (v > 0))]


def best_actions(db, state) -> List[int]:
    """OpenSpiel's actions (houses 0..5 of the mover) that keep the value of
    `state` and, where the folder has the distance, make progress towards
    the capture it needs (the best distance among them), so that play by
    them reaches the value; empty for a finished game."""
    if state.is_terminal():
        return []
    return list(_answer(db, board(state).pits)["best"])
