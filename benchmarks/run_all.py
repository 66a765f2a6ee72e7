"""`make bench`: runs every benchmark in its own process and prints one summary table.

Ratios are tapeflow time / reference time measured in the same run; on a shared
machine absolute times vary, ratios much less. The detailed output of each
script is printed first.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ["tape_overhead.py", "op_dispatch.py", "mlp_train.py", "convnet_step.py", "jacobian.py", "hessian.py",
           "optimizers.py", "saving.py", "memory.py", "startup.py", "data_pipeline.py", "bench_rnn.py",
           "bench_jit.py", "control_flow.py", "function_call.py", "bench_random.py"]
MARK = "BENCH_ROW "


def run(script):
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        return [], f"(missing {script})"
    done = subprocess.run([sys.executable, path], capture_output=True, text=True)
    rows, text = [], []
    for line in done.stdout.splitlines():
        if line.startswith(MARK):
            rows.append(json.loads(line[len(MARK):]))
        else:
            text.append(line)
    if done.returncode != 0:
        text.append(f"FAILED ({done.returncode}): {done.stderr.strip().splitlines()[-1] if done.stderr else ''}")
    return rows, "\n".join(text)


def main():
    all_rows = []
    for script in SCRIPTS:
        rows, text = run(script)
        print(f"=== {script}\n{text}\n")
        all_rows.extend(rows)
    others = sorted({k for r in all_rows for k in r["others"]})
    header = f"{'workload':52s} {'unit':>4s} {'tapeflow':>10s} {'reference':>26s} {'ratio':>7s}" + "".join(
        f" {o:>12s}" for o in others)
    print("=== summary (ratio = tapeflow / reference, lower is better)")
    print(header)
    print("-" * len(header))
    for r in all_rows:
        ref = f"{r['reference_value']:.3f} {r['reference']}"
        line = (f"{r['workload']:52s} {r['unit']:>4s} {r['tapeflow']:10.3f} {ref:>26s} "
                f"{r['tapeflow'] / r['reference_value']:6.2f}x")
        line += "".join(f" {r['others'][o]:12.3f}" if o in r["others"] else f" {'-':>12s}" for o in others)
        print(line)


if __name__ == "__main__":
    main()
