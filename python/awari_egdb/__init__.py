"""Exact endgame scores for Awari (Oware): Python bindings of awari-egdb.

``Database(folder)`` probes a folder of tables built by ``awari build`` (or a
VU dataset folder): ``score``, ``scores`` (numpy, GIL released),
``envelope``, ``moves``, ``best``, ``pv``, ``answer``. ``index`` and
``position`` convert between boards and Goedel numbers; ``notation`` and
``parse_notation`` write and read a position's notation
(``4,4,4,4,4,4/4,4,4,4,4,4/S/0,0``), which every call also takes as a board.
``awari_egdb.openspiel`` reads the boards of OpenSpiel's ``oware`` states
(the abapa rule set) and labels them with the tables' values.
"""

from ._native import (
    DamagedTable,
    Database,
    __version__,
    index,
    notation,
    parse_notation,
    position,
)
from . import openspiel

__all__ = [
    "DamagedTable",
    "Database",
    "__version__",
    "index",
    "notation",
    "openspiel",
    "parse_notation",
    "position",
]
