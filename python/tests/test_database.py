"""Tests of the Python module awari_egdb against the `awari` binary, on a
built folder and on a compressed copy (the fixtures are in conftest.py)."""

import json
import shutil
import threading

import numpy as np
import pytest

import awari_egdb
from awari_egdb import Database, DamagedTable
from conftest import awari, random_boards


@pytest.fixture(scope="session")
def sample(top):
    rng = np.random.default_rng(1)
    return random_boards(rng, 300, top)


@pytest.fixture(scope="session")
def answers(folder, sample):
    """What `awari query --json --pv 30` prints for each board of the sample."""
    text = "\n".join(" ".join(str(int(x)) for x in b) for b in sample) + "\n"
    lines = awari("query", "--db", folder, "--json", "--pv", 30, "--stdin", stdin=text)
    out = [json.loads(line) for line in lines.splitlines() if line.strip()]
    assert len(out) == len(sample)
    return out


def test_rules_and_layers(db, top):
    assert db.rules == "awari"
    assert top >= 12
    assert db.layers() == list(range(top + 1))
    assert repr(db).startswith("<awari_egdb.Database path=") and "rules='awari'" in repr(db)


def test_probes_match_the_binary(db, sample, answers):
    for board, a in zip(sample, answers):
        pits = [int(x) for x in board]
        assert a["pits"] == pits
        assert db.score(pits) == a["score"]
        assert db.index(pits) == a["index"] == awari_egdb.index(pits)
        assert awari_egdb.position(sum(pits), a["index"]) == pits
        env = db.envelope(pits)
        assert env == (a["lower"], a["upper"])
        moves = db.moves(pits)
        assert len(moves) == 6
        for m, am in zip(moves, a["moves"]):
            assert m["pit"] == am["pit"]
            assert m["label"] == am["label"] == "ABCDEF"[m["pit"]]
            assert m["legal"] == am["legal"]
            assert m["captures"] == am["captures"]
            assert m["worth"] == am["score"]
            assert m["distance"] == am.get("distance")
            assert m["child"] == am["child"]
        assert db.distance(pits) == a.get("distance")
        assert db.best(pits) == a["best"]
        pv = db.pv(pits, 30)
        assert pv["end"] == a["pv_end"]
        assert [{k: v for k, v in s.items() if v is not None} for s in pv["steps"]] == a["pv"]
        assert db.answer(pits, pv=30) == a


def test_mapped_tables_give_the_same_answers(folder, db, top):
    mapped = Database(folder, mapped=True)
    boards = random_boards(np.random.default_rng(4), 20_000, top)
    assert np.array_equal(mapped.scores(boards), db.scores(boards))
    b = [int(x) for x in boards[7]]
    assert mapped.moves(b) == db.moves(b)
    with pytest.raises(TypeError):
        Database(folder, True)  # mapped is keyword-only


def test_any_sequence_of_ints_is_a_board(db, sample):
    b = sample[0]
    want = db.score([int(x) for x in b])
    assert db.score(tuple(int(x) for x in b)) == want
    assert db.score(b) == want
    assert db.score(b.astype(np.int64)) == want


def test_batch_scores_match(db, sample, answers):
    got = db.scores(sample)
    assert got.dtype == np.int8
    assert got.shape == (len(sample),)
    assert got.tolist() == [a["score"] for a in answers]
    # Any integer dtype, and a list of lists.
    assert db.scores(sample.astype(np.int32)).tolist() == got.tolist()
    assert db.scores(sample.tolist()).tolist() == got.tolist()
    assert db.scores(np.zeros((0, 12), dtype=np.uint8)).shape == (0,)


def test_batch_of_100000(db, top):
    rng = np.random.default_rng(2)
    boards = random_boards(rng, 100_000, top)
    got = db.scores(boards)
    assert got.dtype == np.int8 and got.shape == (100_000,)
    for i in rng.integers(0, len(boards), size=2_000):
        assert got[i] == db.score(boards[i])


@pytest.mark.parametrize(
    "pits",
    [
        [1] * 11,
        [1] * 13,
        [-1] + [0] * 11,
        [256] + [0] * 11,
        [49] + [0] * 11,  # over 48 seeds
        [47] + [0] * 11,  # 47 seeds
        "abcdefghijkl",
        5,
    ],
)
def test_bad_boards_raise_value_error(db, pits):
    with pytest.raises(ValueError):
        db.score(pits)


def test_bad_batches_raise_value_error(db):
    with pytest.raises(ValueError):
        db.scores(np.zeros((3, 11), dtype=np.uint8))
    with pytest.raises(ValueError):
        db.scores(np.full((2, 12), -1, dtype=np.int64))
    with pytest.raises(ValueError):
        db.scores(np.zeros((2, 12), dtype=np.float64))
    with pytest.raises(ValueError):
        awari_egdb.position(49, 0)
    with pytest.raises(ValueError):
        awari_egdb.position(2, 10**9)


def test_a_layer_not_built_raises_file_not_found(db, top):
    board = [top + 1] + [0] * 11
    with pytest.raises(FileNotFoundError, match=f"layer {top + 1}"):
        db.score(board)
    with pytest.raises(FileNotFoundError):
        db.scores(np.array([board], dtype=np.uint8))


def test_a_missing_folder_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        Database(tmp_path / "nothing-here")
    with pytest.raises(FileNotFoundError):
        Database(tmp_path)  # no tables


def test_a_damaged_table_raises_damaged_table(folder, tmp_path):
    copy = tmp_path / "damaged"
    shutil.copytree(folder, copy)
    # The raw table of layer 10, or the compressed file holding it.
    name = "scores.10" if (copy / "scores.10").exists() else "tables.10.zst"
    table = copy / name
    table.write_bytes(b"\x7f" * table.stat().st_size)
    db = Database(copy)
    board = [10] + [0] * 11
    with pytest.raises(DamagedTable, match=name) as e:
        db.score(board)
    assert e.value.path.endswith(name)
    assert isinstance(e.value, OSError)
    with pytest.raises(DamagedTable, match=name):
        db.scores(np.array([board], dtype=np.uint8))
    # Other layers still answer.
    assert db.score([2] + [0] * 11) == Database(folder).score([2] + [0] * 11)


def test_threads_share_a_database_and_scores_releases_the_gil(db, top):
    rng = np.random.default_rng(3)
    boards = random_boards(rng, 20_000, top)
    want = db.scores(boards)
    results = [None] * 4

    def work(k):
        results[k] = db.scores(boards)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert all(not t.is_alive() for t in threads)
    for r in results:
        assert np.array_equal(r, want)


def test_a_board_without_goedel_number_is_answered_from_its_moves(db, top):
    full = [0, 0, 0, 0, 0, 2] + [1] * 6  # every opponent pit holds seeds
    want = db.answer(full)["score"]
    assert db.score(full) == want
    assert list(db.scores(np.array([full, [2] + [0] * 11], dtype=np.uint8)))[0] == want
    assert db.best(full) == db.answer(full)["best"]


def test_value_errors_name_pits_as_players_do(db):
    # The words of `awari query` and the server (the library's).
    with pytest.raises(ValueError, match=r"^pit c: '-1' is not a seed count \(a whole number from 0 to 48\)$"):
        db.score([0] * 8 + [-1] + [0] * 3)
    with pytest.raises(ValueError, match="^pit B: 'x' is not a seed count"):
        db.score([0, "x"] + [0] * 10)
    with pytest.raises(ValueError, match="^pit A: 49 seeds; the whole board holds at most 48$"):
        db.score([49] + [0] * 11)
    with pytest.raises(ValueError, match="^pit f: 300 seeds; the whole board holds at most 48$"):
        db.moves([0] * 11 + [300])
    with pytest.raises(ValueError, match="^60 seeds on the board; awari has at most 48$"):
        db.score([10] * 6 + [0] * 6)
    with pytest.raises(ValueError, match="^board 1: pit A: '-1' is not a seed count"):
        db.scores(np.array([[2] + [0] * 11, [-1] + [0] * 11], dtype=np.int64))
    with pytest.raises(ValueError, match="^board 0: pit b: 60 seeds; the whole board"):
        db.scores(np.array([[0] * 7 + [60] + [0] * 4], dtype=np.uint8))
    for bad in ([256] + [0] * 11, [-1] + [0] * 11):
        with pytest.raises(ValueError) as e:
            db.score(bad)
        assert "0..=255" not in str(e.value)


NORTH = "1,0,2,0,0,3/0,1,2,1,0,1/N/19,18"


def test_north_s_moves_are_labelled_as_players_write_them(db, folder):
    """A notation with North to move: its moves are a..f in moves() and
    answer(), as in `awari query --pos` (text and JSON), `play` and the page;
    twelve pits (no side) stay A..F."""
    shown = json.loads(awari("query", "--db", folder, "--pos", NORTH, "--json"))
    assert [m["label"] for m in shown["moves"]] == list("abcdef")
    assert [m["label"] for m in db.moves(NORTH)] == list("abcdef")
    assert [m["label"] for m in db.answer(NORTH)["moves"]] == list("abcdef")
    board = awari_egdb.parse_notation(NORTH)["board"]
    assert [m["label"] for m in db.moves(board)] == list("ABCDEF")
    assert [m["label"] for m in db.answer(board)["moves"]] == list("ABCDEF")


def test_envelope_and_pv_answer_a_full_row(db, folder):
    """A board without a Goedel number (every opponent pit holds seeds) is
    answered by envelope() and pv() as by every other call: as `awari query
    --json --pv` answers it."""
    for full in ([0, 0, 0, 0, 0, 2] + [1] * 6, [1, 1, 0, 1, 1, 2] + [1] * 6):
        shown = json.loads(awari("query", "--db", folder, "--json", "--pv", 30, *full))
        assert shown["index"] is None
        assert db.envelope(full) == (shown["lower"], shown["upper"])
        pv = db.pv(full, 30)
        assert [s["pits"] for s in pv["steps"]] == [s["pits"] for s in shown["pv"]]
        assert [s["pit"] for s in pv["steps"]] == [s["pit"] for s in shown["pv"]]
        assert pv["end"] == shown["pv_end"]
        assert pv["steps"][0]["pits"] == full


def test_the_notation_is_read_and_written(db):
    text = "1,0,0,0,0,3/0,0,2,0,0,0/N/20,22"
    n = awari_egdb.parse_notation(text)
    assert n["pits"] == [1, 0, 0, 0, 0, 3, 0, 0, 2, 0, 0, 0]
    assert n["to_move"] == "N" and n["captured"] == (20, 22)
    assert n["board"] == [0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 3]  # North's view
    assert awari_egdb.notation(n["pits"], "N", (20, 22)) == text
    assert awari_egdb.notation([1] + [0] * 11) == "1,0,0,0,0,0/0,0,0,0,0,0/S/24,23"
    # Every call takes a notation as a board.
    assert db.score(text) == db.score(n["board"])
    assert db.answer(text)["pits"] == n["board"]
    with pytest.raises(ValueError, match="pit C: 'x'"):
        db.score("4,4,x,4,4,4/4,4,4,4,4,4/S")
    with pytest.raises(ValueError, match="make 49, not 48"):
        awari_egdb.parse_notation("4,4,4,4,4,4/4,4,4,4,4,4/S/1,0")
    with pytest.raises(ValueError, match="to_move"):
        awari_egdb.notation([1] + [0] * 11, "W")


def test_counts_are_checked_with_value_errors(db):
    with pytest.raises(ValueError, match="47"):
        awari_egdb.position(47, 0)
    with pytest.raises(ValueError, match="seeds must be at least 0"):
        awari_egdb.position(-1, 0)
    with pytest.raises(ValueError, match="index must be at least 0"):
        awari_egdb.position(3, -2)
    with pytest.raises(ValueError, match="n must be at least 0"):
        db.pv([2] + [0] * 11, -1)
    with pytest.raises(ValueError, match="pv must be at least 0"):
        db.answer([2] + [0] * 11, pv=-1)


def test_a_batch_can_say_not_available(db, top):
    boards = np.array([[2] + [0] * 11, [top + 1] + [0] * 11, [3] + [0] * 11], dtype=np.uint8)
    got = db.scores(boards, missing=-128)
    assert list(got) == [db.score(boards[0]), -128, db.score(boards[2])]
    with pytest.raises(FileNotFoundError):
        db.scores(boards)


def test_close_and_with(folder):
    with Database(folder) as db:
        assert db.score([2] + [0] * 11) in (-2, 0, 2)
        assert not db.closed
    assert db.closed
    assert "closed" in repr(db)
    with pytest.raises(ValueError, match="closed"):
        db.score([2] + [0] * 11)
    db.close()  # twice is harmless
