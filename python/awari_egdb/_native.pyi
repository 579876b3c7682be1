"""The compiled part of awari_egdb (re-exported by the package)."""

from os import PathLike
from types import TracebackType
from typing import Literal, Optional, Sequence, SupportsIndex, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str

Board = Union[Sequence[SupportsIndex], str]
"""12 pit counts (ints from 0 to 48, at most 48 in all), the mover's pits
A..F (0..5) first, or a position's notation ("4,4,4,4,4,4/4,4,4,4,4,4/S/0,0").
A bad count is a ValueError naming its pit, as `awari query` words it."""

class Notation(TypedDict):
    pits: list[int]
    to_move: Literal["S", "N"]
    captured: tuple[int, int]
    board: list[int]

class Move(TypedDict):
    pit: int
    label: str
    legal: bool
    captures: int
    worth: Optional[int]
    distance: Optional[Union[int, Literal["endless"]]]
    child: Optional[list[int]]

class PvStep(TypedDict):
    pits: list[int]
    score: int
    distance: Optional[Union[int, Literal["endless"]]]
    pit: int
    captures: int

class Pv(TypedDict):
    steps: list[PvStep]
    last: list[int]
    end: Literal["game_over", "repetition", "limit"]

class DamagedTable(OSError):
    """A table of the folder is damaged; `path` names the file."""

    path: Optional[str]

class Database:
    """Exact scores from a folder of tables (built by `awari build`, or a VU
    dataset folder). Safe to share between threads."""

    def __init__(
        self,
        path: Union[str, PathLike[str]],
        *,
        mapped: bool = False,
        rules: Optional[str] = None,
    ) -> None:
        """Opens a folder; FileNotFoundError when it is missing or holds no tables.

        mapped=True maps the tables (faster batches); the caller promises no
        table is truncated or modified meanwhile (else SIGBUS kills the process).
        The rule set is the folder's (its manifest's, else its compressed
        files'); raw tables without manifest are read as awari's
        (rules_assumed) unless rules= names theirs; ValueError where the
        folder names another."""
    def close(self) -> None:
        """Closes the tables; later probes raise ValueError."""
    @property
    def closed(self) -> bool:
        """Whether close() was called."""
    def __enter__(self) -> "Database": ...
    def __exit__(
        self,
        exc_type: Optional[type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> bool: ...
    @property
    def path(self) -> str:
        """The folder."""
    @property
    def rules(self) -> str:
        """The rule set: "awari", "abapa", "olympiad" or "awale"."""
    @property
    def rules_assumed(self) -> bool:
        """Whether nothing named the rule set (raw tables without manifest, read as awari's)."""
    def layers(self) -> list[int]:
        """The layers (seed counts) the folder holds."""
    def score(self, pits: Board) -> int:
        """The exact score of a board for the side to move."""
    def scores(
        self, boards: npt.ArrayLike, *, missing: Optional[int] = None
    ) -> npt.NDArray[np.int8]:
        """The scores of an (N, 12) integer array of boards, as int8 (GIL released);
        with missing=V, boards of layers not built get V instead of failing the batch."""
    def envelope(self, pits: Board) -> Optional[tuple[int, int]]:
        """(lower, upper) of the cycle envelope, or None when not built."""
    def distance(self, pits: Board) -> Optional[Union[int, Literal["endless"]]]:
        """Plies to the next capture when both sides keep the score (0: the
        game is over), "endless" when only endless play keeps it, None
        without a distance table."""
    def moves(self, pits: Board) -> list[Move]:
        """The six pits of the mover as moves, labelled A..F (a..f for a
        notation with North to move)."""
    def best(self, pits: Board) -> list[int]:
        """The best pits (0..5): best worth, then best distance; empty when
        the game is over."""
    def pv(self, pits: Board, n: int = 100) -> Pv:
        """The line of best play of at most n moves."""
    def answer(self, pits: Board, pv: Optional[int] = None) -> dict[str, object]:
        """Everything about a board, as `awari query --json` prints it."""
    def index(self, pits: Board) -> int:
        """The Goedel number of a board within its layer."""

def index(pits: Board) -> int:
    """The Goedel number of a board within its layer (its seed count)."""

def position(seeds: int, index: int) -> list[int]:
    """The board with Goedel number `index` in layer `seeds`."""

def parse_notation(text: str) -> Notation:
    """A position's notation read: South's pits, side to move, captured, and the board to move."""

def notation(
    pits: Sequence[SupportsIndex],
    to_move: str = "S",
    captured: Optional[tuple[int, int]] = None,
) -> str:
    """The notation of a position (South's A..F first)."""
