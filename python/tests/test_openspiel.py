"""The OpenSpiel bridge (awari_egdb.openspiel) on random games of
OpenSpiel's `oware`, labelled from an abapa folder.

Every state of the games is read as our board and written back as
OpenSpiel's observation; every state with few enough seeds on the board is
labelled with its exact value, and the labels are checked three ways:
against `awari query --json` (the binary's own search over the moves of the
tables), against OpenSpiel's legal actions, and by playing the game out in
OpenSpiel with the best actions of both sides, whose end must give the
returns `openspiel.returns` predicted (for pinned positions whose line of
play does not repeat a board, the only ones whose value cannot depend on
how endless play is scored).

pyspiel is PyPI's open_spiel (`pip install --no-deps open_spiel==2.0.2`);
without it these tests skip, unless $AWARI_REQUIRE_OPENSPIEL is set (as in
.ci/run), where its absence fails them.
"""

import json
import os
import random

import pytest

from awari_egdb import Database, openspiel
from conftest import awari

if os.environ.get("AWARI_REQUIRE_OPENSPIEL"):
    import pyspiel
else:
    pyspiel = pytest.importorskip("pyspiel")

GAMES = 400


def random_states(games, seed):
    """Every state (the finished ones too) of `games` random games."""
    game = pyspiel.load_game("oware")
    rng = random.Random(seed)
    for _ in range(games):
        state = game.new_initial_state()
        while True:
            yield state.clone()
            if state.is_terminal() or len(state.history()) >= 999:
                break
            state.apply_action(rng.choice(state.legal_actions()))


@pytest.fixture(scope="module")
def abapa(abapa_folder):
    db = Database(abapa_folder)
    assert db.rules == "abapa"
    return db


@pytest.fixture(scope="module")
def labelled(abapa):
    """The unfinished states of random games whose board is in the folder."""
    top = max(abapa.layers())
    return [
        s
        for s in random_states(GAMES, 7)
        if not s.is_terminal() and sum(openspiel.board(s).pits) <= top
    ]


def test_boards_round_trip():
    count = 0
    for state in random_states(100, 1):
        b = openspiel.board(state)
        assert len(b.pits) == 12 and b.player in (0, 1)
        assert sum(b.pits) + sum(b.captured) == 48
        text = state.observation_string(0)
        assert openspiel.observation(b.pits, b.player, b.captured) == text
        assert openspiel.houses(b.pits, b.player) == [int(x) for x in text.split(" | ")[2].split()]
        if not state.is_terminal():
            assert b.player == state.current_player()
        count += 1
    assert count > 5_000


def test_bad_states_and_boards_raise_value_error():
    class Fake:
        def __init__(self, text):
            self.text = text

        def observation_string(self, player):
            return self.text

    for text in ["", "0 | 0 0", "2 | 0 0 | " + "4 " * 12, "0 | 0 0 | " + "4 " * 8, "0 | x 0 | 1"]:
        with pytest.raises(ValueError):
            openspiel.board(Fake(text))
    with pytest.raises(ValueError):
        openspiel.houses([1] * 11, 0)
    with pytest.raises(ValueError):
        openspiel.houses([1] * 12, 2)


def test_labels_match_the_binary_and_openspiel_s_moves(abapa, abapa_folder, labelled):
    assert len(labelled) > 2_000
    indexable = []
    for state in labelled:
        b = openspiel.board(state)
        moves = abapa.answer(b.pits)["moves"]
        assert [m["pit"] for m in moves if m["legal"]] == state.legal_actions()
        assert set(openspiel.best_actions(abapa, state)) <= set(state.legal_actions())
        if min(b.pits[6:]) == 0:
            indexable.append((state, b))
    assert len(indexable) > 1_000
    text = "\n".join(" ".join(map(str, b.pits)) for _, b in indexable) + "\n"
    lines = awari("query", "--db", abapa_folder, "--json", "--stdin", stdin=text).splitlines()
    assert len(lines) == len(indexable)
    for (state, b), line in zip(indexable, lines):
        a = json.loads(line)
        assert a["pits"] == b.pits
        margin = b.captured[0] - b.captured[1] + a["score"]
        assert openspiel.value(abapa, state) == (margin if b.player == 0 else -margin)
        assert openspiel.best_actions(abapa, state) == a["best"]


def test_best_play_in_openspiel_ends_as_predicted(abapa, labelled):
    checked = repeated = 0
    for state in labelled[::4]:
        if not abapa.answer(openspiel.board(state).pits)["pinned"]:
            continue
        want = openspiel.returns(abapa, state)
        value = openspiel.value(abapa, state)
        s = state.clone()
        while not s.is_terminal():
            # Every position on the line keeps the value, by OpenSpiel's captures.
            assert openspiel.value(abapa, s) == value
            a = abapa.answer(openspiel.board(s).pits)
            move = a["moves"][a["best"][0]]
            s.apply_action(move["pit"])
            after = abapa.answer(move["child"])
        # OpenSpiel ends a game after a move that captures nothing only when
        # the next side cannot move, or when a board repeats (of the line, or
        # of the game before it, which the state remembers).
        if move["captures"] == 0 and after["best"]:
            repeated += 1
            continue
        assert s.returns() == want, (state.observation_string(0), state.history())
        checked += 1
    assert checked > 200, (checked, repeated)


def test_best_actions_reach_the_predicted_returns(abapa, labelled):
    """From every labelled state of the 400 games (pinned or not), both
    sides taking the best actions: the returns predicted, unless the game
    ends by a repetition, which may only be of a board of the random game
    before the state (OpenSpiel remembers it) or where the score is endless
    play's (distance "endless")."""
    checked = before = endless = 0
    for state in labelled:
        want = openspiel.returns(abapa, state)
        s = state.clone()
        seen = set()
        while not s.is_terminal():
            b = openspiel.board(s)
            seen.add((tuple(b.pits), b.player))
            pit = openspiel.best_actions(abapa, s)[0]
            move = abapa.moves(b.pits)[pit]
            if move["captures"] > 0:
                seen = set()
            s.apply_action(pit)
        child = move["child"]
        if move["captures"] == 0 and abapa.best(child):
            # Ended by a repetition.
            if (tuple(child), 1 - b.player) in seen:
                assert abapa.distance(child) == "endless", (state.history(), child)
                endless += 1
            else:
                before += 1
            continue
        assert s.returns() == want, (state.observation_string(0), state.history())
        checked += 1
    # About four in five reach their returns; the rest end by a repetition,
    # of the game before the state or where the score is endless play's
    # (small abapa layers hold many of those).
    assert checked + before + endless == len(labelled)
    assert checked > 0.75 * len(labelled), (checked, before, endless, len(labelled))


def test_a_folder_of_other_rules_is_refused(raw_folder):
    """OpenSpiel plays abapa: the values of an awari folder are not its own."""

    class State:
        def observation_string(self, player):
            return openspiel.observation([2] + [0] * 5 + [1] + [0] * 5, 0, (20, 25))

        def is_terminal(self):
            return False

    db = Database(raw_folder)
    assert db.rules == "awari"
    for call in (openspiel.value, openspiel.returns, openspiel.best_actions):
        with pytest.raises(ValueError, match="abapa"):
            call(db, State())
