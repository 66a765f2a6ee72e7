"""What only the engine touches: tracing state, reference counts, a Variable's storage and a tensor's
value stay inside ``tapeflow/``; layers, optimizers, saving and keras_ops go through ops and public functions."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUTSIDE = ["layers", "optimizers", "saving", "keras_ops"]
FORBIDDEN = {
    "the recording state (tracing)": re.compile(r"\btracing_graph\b|\btracing_into\b|recording\.current\b"
                                                r"|\bdefer_call\b"),
    "reference counting": re.compile(r"\bgetrefcount\b"),
    "a Variable's storage": re.compile(r"\._adopt\b|\._write_inplace\b"),
    "a Tensor's or Variable's private value (use tapeflow.framework.tensor.host_array)":
        re.compile(r"\._value\b|[\"']_value[\"']"),
}


def _sources():
    for package in OUTSIDE:
        yield from sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("what", sorted(FORBIDDEN))
def test_no_package_outside_the_engine_reaches_into_it(what):
    pattern = FORBIDDEN[what]
    offenders = [f"{path.relative_to(ROOT)}:{n}" for path in _sources()
                 for n, line in enumerate(path.read_text().splitlines(), 1) if pattern.search(line)]
    assert offenders == [], f"{what} used outside tapeflow/: {offenders}"


def test_the_check_sees_the_sources():
    assert len(list(_sources())) > 50
