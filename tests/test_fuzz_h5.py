"""A bounded fuzz run of the HDF5-based loaders: seeded bit flips, byte overwrites and truncations of
Keras files (and wrong-typed config fields), a few hundred per format. Every load must end in a clear
error (the FileFormatError family, OSError) or in a model that loads and predicts. The cases run in
worker subprocesses, so that a crash or a hang fails this test instead of killing pytest; the long run
is benchmarks/fuzz_h5_files.py."""
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fuzz_cases import FORMATS  # noqa: E402

CASES_PER_FORMAT = 300
TIMEOUT = 120   # seconds for a whole batch; one case takes about 10 ms


def run_batch(cases):
    """[(case, outcome line)] for ``cases`` [(fmt, seed)] run in one worker; fails on a crash or hang."""
    worker = subprocess.Popen([sys.executable, os.path.join(HERE, "fuzz_cases.py"), "--serve"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = worker.communicate("".join(f"{fmt} {seed}\n" for fmt, seed in cases), timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        worker.kill()
        out, err = worker.communicate()
        answered = len(out.splitlines()) - 1
        pytest.fail(f"hang: no answer for case {cases[answered] if answered < len(cases) else '?'} "
                    f"within {TIMEOUT} s")
    lines = out.splitlines()
    assert lines and lines[0] == "ready", err[-2000:]
    answers = lines[1:]
    if worker.returncode != 0 or len(answers) != len(cases):
        pytest.fail(f"crash (exit {worker.returncode}) at case {cases[len(answers)]}: {err[-1000:]}")
    return list(zip(cases, answers))


@pytest.fixture(scope="module")
def outcomes():
    """Two workers side by side, each with half of the formats."""
    formats = list(FORMATS)
    halves = [formats[0::2], formats[1::2]]
    batches = [[(fmt, seed) for fmt in half for seed in range(CASES_PER_FORMAT)] for half in halves]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return [found for batch in pool.map(run_batch, batches) for found in batch]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_mutated_file_loads_or_fails_clearly(outcomes, fmt):
    mine = [(case, answer) for case, answer in outcomes if case[0] == fmt]
    assert len(mine) == CASES_PER_FORMAT
    obscure = [(case, answer) for case, answer in mine if not answer.startswith(("ok", "clear"))]
    assert obscure == []
    kinds = {answer.split()[0] for _, answer in mine}
    assert "clear" in kinds   # the mutations do reach the checks


def test_the_cases_reach_the_loaders_both_ways(outcomes):
    answers = [answer for _, answer in outcomes]
    assert sum(a.startswith("ok") for a in answers) > len(answers) // 10     # harmless mutations still load
    errors = {a.split()[1] for a in answers if a.startswith("clear")}
    assert {"FileContentError", "ArchiveError"} <= errors
