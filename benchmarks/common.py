"""Shared by the benchmark scripts: one machine-readable summary row per workload.

Each script prints its own detailed table, then ``emit`` lines that
``run_all.py`` gathers into the summary table of ``make bench``.
"""
import json

MARK = "BENCH_ROW "


def emit(workload, tapeflow_seconds, reference_seconds, reference="numpy", others=None, unit="ms"):
    """One summary row: tapeflow's time, the reference's time, and optional {framework: seconds}.

    ``unit`` is "ms" or "us" for times (given in seconds), or e.g. "MB", printed as given.
    """
    scale = {"ms": 1e3, "us": 1e6}.get(unit, 1.0)
    row = {"workload": workload, "unit": unit, "tapeflow": tapeflow_seconds * scale,
           "reference": reference, "reference_value": reference_seconds * scale,
           "others": {k: v * scale for k, v in (others or {}).items()}}
    print(MARK + json.dumps(row))


def optional_import(name):
    """PyTorch or TensorFlow when installed, for comparison only (never a dependency)."""
    try:
        return __import__(name)
    except ImportError:
        return None
