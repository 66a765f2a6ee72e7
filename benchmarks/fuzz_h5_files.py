"""Long fuzz run of the HDF5-based loaders (not part of ``make test``; tests/test_fuzz_h5.py is the short one).

Each case takes a file written by real Keras (tests/fixtures/keras), mutates it with a seeded
random generator (bit flips, byte overwrites, truncations; half of them aimed at the HDF5
metadata rather than the raw weight data) and loads it. Cases run in worker subprocesses; a
worker that dies is a crash, one that does not answer within the timeout is a hang. Each case
ends as one of:

* ok: the load succeeded and the model predicts (a flipped bit in raw data is the file's own value);
* clear: a ``FileFormatError`` (any subclass, UnknownClassError and UnsafeContentError included) or ``OSError``;
* obscure: any other exception type (printed, with the first few messages);
* crash / hang.

Usage: ``python benchmarks/fuzz_h5_files.py [--cases N] [--workers W] [--timeout S] [--formats a,b]``.
"""
import argparse
import collections
import os
import select
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

from fuzz_cases import FORMATS  # noqa: E402  (tests/fuzz_cases.py: shared with tests/test_fuzz_h5.py)

WORKER = os.path.join(HERE, "..", "tests", "fuzz_cases.py")


class Worker:
    def __init__(self, timeout):
        self.timeout = timeout
        self.proc = subprocess.Popen([sys.executable, WORKER, "--serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)   # "ready" once tapeflow is imported
        if not ready or self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("a fuzz worker did not start")

    @property
    def alive(self):
        return self.proc.poll() is None

    def close(self):
        if self.alive:
            self.proc.stdin.close()
            self.proc.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=20000, help="total cases, spread over the formats")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds before a case counts as a hang")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--first-seed", type=int, default=0)
    args = parser.parse_args()
    formats = args.formats.split(",")
    per_format = args.cases // len(formats)
    queue = collections.deque((fmt, args.first_seed + i) for i in range(per_format) for fmt in formats)
    counts = {fmt: collections.Counter() for fmt in formats}
    examples = collections.defaultdict(list)
    workers = [Worker(args.timeout) for _ in range(args.workers)]
    busy = {}
    start = time.time()
    done = 0
    while queue or busy:
        for w in workers:   # keep every worker busy: one case at a time each
            if w not in busy and queue:
                case = queue.popleft()
                w.proc.stdin.write(f"{case[0]} {case[1]}\n")
                w.proc.stdin.flush()
                busy[w] = (case, time.time())
        ready, _, _ = select.select([w.proc.stdout for w in busy], [], [], 1.0)
        for w in list(busy):
            (fmt, seed), started = busy[w]
            if w.proc.stdout in ready:
                line = w.proc.stdout.readline()
                if line:
                    outcome, _, detail = line.rstrip("\n").partition(" ")
                else:
                    outcome, detail = "crash", f"exit {w.proc.wait()}"
            elif time.time() - started > args.timeout:
                w.proc.kill()
                w.proc.wait()
                outcome, detail = "hang", ""
            else:
                continue
            del busy[w]
            counts[fmt][outcome] += 1
            if outcome in ("obscure", "crash", "hang") and len(examples[(fmt, outcome)]) < 5:
                examples[(fmt, outcome)].append(f"seed {seed}: {detail}")
            if not w.alive:
                workers[workers.index(w)] = Worker(args.timeout)
            done += 1
            if done % 1000 == 0:
                print(f"  {done} cases, {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    for w in workers:
        w.close()
    elapsed = time.time() - start
    print(f"{'format':<22}{'cases':>8}{'ok':>8}{'clear':>8}{'obscure':>9}{'crashes':>9}{'hangs':>7}")
    total = collections.Counter()
    for fmt in formats:
        c = counts[fmt]
        total.update(c)
        print(f"{fmt:<22}{sum(c.values()):>8}{c['ok']:>8}{c['clear']:>8}{c['obscure']:>9}{c['crash']:>9}"
              f"{c['hang']:>7}")
    print(f"{'total':<22}{sum(total.values()):>8}{total['ok']:>8}{total['clear']:>8}{total['obscure']:>9}"
          f"{total['crash']:>9}{total['hang']:>7}")
    print(f"{elapsed:.0f} s with {args.workers} workers, timeout {args.timeout} s")
    for (fmt, outcome), lines in sorted(examples.items()):
        print(f"-- {fmt} {outcome}:")
        for line in lines:
            print(f"   {line[:300]}")


if __name__ == "__main__":
    main()
