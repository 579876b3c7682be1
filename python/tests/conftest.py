"""Folders and the binary shared by the tests of the awari_egdb package.

The awari folder is $AWARI_TEST_DB when set (layers 0..=12 at least, with
the envelope; .ci/run gives 0..=16), else built here with the repository's
binary (`awari build --max-seeds 12`). Every test that takes `folder` runs
twice: on that folder and on a compressed copy (format 4, raw tables
removed), $AWARI_TEST_DB_COMPRESSED when set, else made here with `awari
compress`. The abapa folder of the OpenSpiel tests is $AWARI_TEST_ABAPA_DB,
else built here (`--rules abapa --max-seeds 12`). The binary is $AWARI_BIN
when set, else `cargo run --release --bin awari --` from the repository's
root.
"""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from awari_egdb import Database

ROOT = Path(__file__).resolve().parents[2]


def awari(*args, stdin=None):
    """Runs the binary; returns its standard output."""
    exe = os.environ.get("AWARI_BIN")
    cmd = [exe] if exe else ["cargo", "run", "--release", "-q", "--bin", "awari", "--"]
    out = subprocess.run(
        cmd + [str(a) for a in args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def built(tmp_path_factory, variable, name, *build_args):
    given = os.environ.get(variable)
    if given:
        return Path(given)
    d = tmp_path_factory.mktemp(name)
    awari("build", "--max-seeds", 12, "--db", d, "-q", *build_args)
    return d


@pytest.fixture(scope="session")
def raw_folder(tmp_path_factory):
    return built(tmp_path_factory, "AWARI_TEST_DB", "db")


@pytest.fixture(scope="session", params=["raw", "compressed"])
def folder(request, raw_folder, tmp_path_factory):
    if request.param == "raw":
        return raw_folder
    given = os.environ.get("AWARI_TEST_DB_COMPRESSED")
    if given:
        return Path(given)
    d = tmp_path_factory.mktemp("compressed") / "db"
    shutil.copytree(raw_folder, d)
    awari("compress", "--db", d, "--format", 4, "--remove-raw", "-q")
    return d


@pytest.fixture(scope="session")
def db(folder):
    return Database(folder)


@pytest.fixture(scope="session")
def top(db):
    """The highest layer of the folder."""
    return max(db.layers())


@pytest.fixture(scope="session")
def abapa_folder(tmp_path_factory):
    return built(tmp_path_factory, "AWARI_TEST_ABAPA_DB", "abapa", "--rules", "abapa")


def random_boards(rng, count, max_seeds):
    """`count` random boards with a Goedel number, of 0..=max_seeds seeds."""
    seeds = rng.integers(0, max_seeds + 1, size=count)
    boards = np.zeros((count, 12), dtype=np.uint8)
    for i, n in enumerate(seeds):
        pits = np.bincount(rng.integers(0, 12, size=n), minlength=12)
        if np.all(pits[6:] > 0):
            pits[6 + rng.integers(0, 6)] = 0  # some opponent pit empty
        boards[i] = pits
    return boards
