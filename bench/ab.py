#!/usr/bin/env python3
"""Two stepsim binaries timed in pairs on the same command: is B faster than A, and by how much?

    bench/ab.py [-n ROUNDS] A B -- ARGS...        (e.g. ARGS: run bench/suites/pipeline-base.yaml --json)

Each round runs `A ARGS` and `B ARGS` back to back, the order alternating (A B, B A, ...), so
that a machine whose load drifts weighs on both alike. A timing is the child's CPU time, user +
sys from wait4 (microsecond resolution), never wall time; memory is its peak resident size.
Every run's stdout must be byte for byte that of A's first run (issue 16's rule: speed work
changes no result); a difference, or an exit status other than 0, stops the comparison (exit 1).

Prints per binary the median, quartiles and minimum of the CPU time and the peak RSS, then the
rounds' own ratios B / A: their median, and in how many rounds B used less CPU. On a shared
machine a pair's two runs can differ by a third; the ratio of each pair, not the difference of
two medians, is the figure to report (docs/performance.md). Python 3 standard library only.
"""
import argparse
import os
import statistics
import sys
import tempfile


def run_once(binary, args, out_path):
    """Runs binary with args, stdout to out_path; returns (cpu seconds, peak RSS KiB, exit status)."""
    pid = os.fork()
    if pid == 0:
        try:
            out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(out, 1)
            os.dup2(null, 2)  # progress and notes on stderr are not results
            os.execv(binary, [binary] + args)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def quartiles(values):
    v = sorted(values)
    return v[len(v) // 4], statistics.median(v), v[(3 * len(v)) // 4], v[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--rounds", type=int, default=20, help="pairs to run (default 20)")
    ap.add_argument("a", help="the baseline binary")
    ap.add_argument("b", help="the binary compared with it")
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- then the stepsim command line")
    opts = ap.parse_args()
    args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    if opts.rounds < 1 or not args:
        ap.error("needs at least one round and a command after --")
    for binary in (opts.a, opts.b):
        if not os.access(binary, os.X_OK):
            ap.error(f"{binary}: not an executable")
    cpu = {opts.a: [], opts.b: []}
    rss = {opts.a: [], opts.b: []}
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        reference = None
        for r in range(opts.rounds):
            order = (opts.a, opts.b) if r % 2 == 0 else (opts.b, opts.a)
            for binary in order:
                path = os.path.join(tmp, "out")
                t, m, code = run_once(binary, args, path)
                if code != 0:
                    sys.exit(f"ab: {binary} exited with {code} (round {r + 1})")
                with open(path, "rb") as f:
                    text = f.read()
                if reference is None:
                    reference = text
                elif text != reference:
                    sys.exit(f"ab: {binary}'s output differs from {opts.a}'s first (round {r + 1}): "
                             f"{len(text)} bytes against {len(reference)}")
                cpu[binary].append(t)
                rss[binary].append(m)
            ratios.append(cpu[opts.b][-1] / cpu[opts.a][-1] if cpu[opts.a][-1] > 0 else 1.0)
            print(f"\rab: round {r + 1} of {opts.rounds}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    width = max(len(opts.a), len(opts.b), len("binary"))
    print(f"{'binary':<{width}}  {'p25':>9}  {'median':>9}  {'p75':>9}  {'min':>9}  {'peak RSS':>11}")
    for binary, label in ((opts.a, "A"), (opts.b, "B")):
        p25, med, p75, low = quartiles(cpu[binary])
        print(f"{binary:<{width}}  {p25 * 1e3:7.1f}ms  {med * 1e3:7.1f}ms  {p75 * 1e3:7.1f}ms  {low * 1e3:7.1f}ms  "
              f"{max(rss[binary]) / 1024:8.1f}MiB")
    faster = sum(1 for x in ratios if x < 1)
    print(f"B / A CPU, per pair: median {statistics.median(ratios):.3f} (quartiles {quartiles(ratios)[0]:.3f} - "
          f"{quartiles(ratios)[2]:.3f}); B used less CPU in {faster} of {len(ratios)} pairs; outputs identical")


if __name__ == "__main__":
    main()
