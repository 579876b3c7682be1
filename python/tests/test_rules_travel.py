"""The rule set travels with the compressed files: a folder of awale
`scores.n.zst` without manifest opens under awale, a folder mixing rule
sets is refused, raw tables without manifest are read as awari's saying
so (`rules_assumed`), and `rules=` names theirs."""

import shutil

import numpy as np
import pytest

from awari_egdb import Database
from conftest import awari, random_boards


@pytest.fixture(scope="session")
def awale(tmp_path_factory):
    """Layers 0..=10 of awale with the envelope and the manifest."""
    d = tmp_path_factory.mktemp("awale")
    awari("build", "--rules", "awale", "--max-seeds", 10, "--db", d, "-q")
    return d


@pytest.fixture(scope="session")
def shipped(awale, tmp_path_factory):
    """The awale scores alone, compressed (format 4), without manifest."""
    packed = tmp_path_factory.mktemp("packed") / "db"
    shutil.copytree(awale, packed)
    awari("compress", "--db", packed, "--format", 4, "--scores-only", "--remove-raw", "-q")
    d = tmp_path_factory.mktemp("shipped")
    for f in packed.glob("scores.*.zst"):
        shutil.copy(f, d / f.name)
    return d


def test_a_folder_of_compressed_scores_opens_under_their_rules(awale, shipped):
    db, full = Database(shipped), Database(awale)
    assert db.rules == "awale" and not db.rules_assumed
    boards = random_boards(np.random.default_rng(3), 500, 10)
    assert np.array_equal(db.scores(boards), full.scores(boards))
    assert Database(shipped, rules="awale").rules == "awale"
    with pytest.raises(ValueError, match="follow the awale rules, not awari"):
        Database(shipped, rules="awari")


def test_files_of_two_rule_sets_are_refused(shipped, tmp_path):
    d = tmp_path / "mixed"
    shutil.copytree(shipped, d)
    other = tmp_path / "awari"
    awari("build", "--max-seeds", 3, "--db", other, "-q")
    awari("compress", "--db", other, "--format", 4, "--scores-only", "--remove-raw", "-q")
    shutil.copy(other / "scores.3.zst", d / "scores.3.zst")
    with pytest.raises(ValueError, match="name different rule sets"):
        Database(d)


def test_raw_tables_without_manifest_are_assumed_awari_and_rules_names_them(awale, tmp_path):
    d = tmp_path / "raw"
    d.mkdir()
    for n in range(11):
        shutil.copy(awale / f"scores.{n}", d / f"scores.{n}")
    db = Database(d)
    assert db.rules == "awari" and db.rules_assumed
    assert db.answer([1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0])["rules_assumed"] is True
    named = Database(d, rules="awale")
    assert named.rules == "awale" and not named.rules_assumed
    full = Database(awale)
    boards = random_boards(np.random.default_rng(4), 200, 10)
    # The scores alone: the same moves but for the distance, which the
    # folder of scores does not hold.
    def scores_part(moves):
        return [{k: v for k, v in m.items() if k != "distance"} for m in moves]

    for b in boards:
        assert scores_part(named.moves(b)) == scores_part(full.moves(b))
        assert all(m["distance"] is None for m in named.moves(b))
    with pytest.raises(ValueError, match="unknown rule set"):
        Database(d, rules="nonsense")
