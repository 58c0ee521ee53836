#!/usr/bin/env python3
"""Two stepsim binaries timed in pairs on the same command: is B faster than A, and by how much?

    bench/ab.py [-n ROUNDS] A B -- ARGS...        (e.g. ARGS: run bench/suites/pipeline-base.yaml --json)
    bench/ab.py --b-args="--trace X.pftrace" --remove X.pftrace A A -- ARGS...   (what a trace costs)

Each round runs `A ARGS` and `B ARGS` back to back, the order alternating (A B, B A, ...), so
that a machine whose load drifts weighs on both alike. A timing is the child's CPU time, user +
sys from wait4 (microsecond resolution), and its wall time beside it (a trace's file is written by
a second thread: what the user waits for is the wall time); memory is its peak resident size.
`--b-args` adds arguments to B's runs only (the same binary with and without an option),
`--remove` deletes a file before each run, outside the timing (a trace's old file).
Every run's stdout must be byte for byte that of A's first run (issue 16's rule: speed work
changes no result); a difference, or an exit status other than 0, stops the comparison (exit 1).

Prints per binary the median, quartiles and minimum of the CPU time and the peak RSS, then the
rounds' own ratios B / A: their median, and in how many rounds B used less CPU. On a shared
machine a pair's two runs can differ by a third; the ratio of each pair, not the difference of
two medians, is the figure to report (docs/performance.md). Python 3 standard library only.
"""
import argparse
import os
import shlex
import statistics
import sys
import tempfile
import time


def run_once(binary, args, out_path):
    """Runs binary with args, stdout to out_path; returns (cpu s, wall s, peak RSS KiB, exit status)."""
    start = time.perf_counter()
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
    wall = time.perf_counter() - start
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def quartiles(values):
    v = sorted(values)
    return v[len(v) // 4], statistics.median(v), v[(3 * len(v)) // 4], v[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", "--rounds", type=int, default=20, help="pairs to run (default 20)")
    ap.add_argument("a", help="the baseline binary")
    ap.add_argument("b", help="the binary compared with it")
    ap.add_argument("--b-args", default="", help="arguments added to B's command line only")
    ap.add_argument("--remove", default=None, help="a file removed before every run (not timed)")
    # The stepsim command line is everything after the first "--" (it has options of its own).
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    if opts.rounds < 1 or not args:
        ap.error("needs at least one round and a command after --")
    for binary in (opts.a, opts.b):
        if not os.access(binary, os.X_OK):
            ap.error(f"{binary}: not an executable")
    runs = {"A": (opts.a, args), "B": (opts.b, args + shlex.split(opts.b_args))}
    cpu = {"A": [], "B": []}
    wall = {"A": [], "B": []}
    rss = {"A": [], "B": []}
    ratios, wall_ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        reference = None
        for r in range(opts.rounds):
            order = ("A", "B") if r % 2 == 0 else ("B", "A")
            for label in order:
                binary, command = runs[label]
                path = os.path.join(tmp, "out")
                if opts.remove and os.path.exists(opts.remove):
                    os.remove(opts.remove)
                t, w, m, code = run_once(binary, command, path)
                if code != 0:
                    sys.exit(f"ab: {binary} exited with {code} (round {r + 1})")
                with open(path, "rb") as f:
                    text = f.read()
                if reference is None:
                    reference = text
                elif text != reference:
                    sys.exit(f"ab: {binary}'s output differs from {opts.a}'s first (round {r + 1}): "
                             f"{len(text)} bytes against {len(reference)}")
                cpu[label].append(t)
                wall[label].append(w)
                rss[label].append(m)
            ratios.append(cpu["B"][-1] / cpu["A"][-1] if cpu["A"][-1] > 0 else 1.0)
            wall_ratios.append(wall["B"][-1] / wall["A"][-1] if wall["A"][-1] > 0 else 1.0)
            print(f"\rab: round {r + 1} of {opts.rounds}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    names = {label: " ".join([binary] + command[len(args):]) for label, (binary, command) in runs.items()}
    width = max(len(names["A"]), len(names["B"]), len("binary"))
    heads = ("CPU p25", "median", "p75", "min", "wall med")
    print(f"{'binary':<{width}}  " + "  ".join(f"{h:>9}" for h in heads) + f"  {'peak RSS':>11}")
    for label in ("A", "B"):
        p25, med, p75, low = quartiles(cpu[label])
        times = (p25, med, p75, low, statistics.median(wall[label]))
        print(f"{names[label]:<{width}}  " + "  ".join(f"{t * 1e3:7.1f}ms" for t in times) +
              f"  {max(rss[label]) / 1024:8.1f}MiB")
    faster = sum(1 for x in ratios if x < 1)
    print(f"B / A CPU, per pair: median {statistics.median(ratios):.3f} (quartiles {quartiles(ratios)[0]:.3f} - "
          f"{quartiles(ratios)[2]:.3f}); B used less CPU in {faster} of {len(ratios)} pairs; outputs identical")
    print(f"B / A wall, per pair: median {statistics.median(wall_ratios):.3f} (quartiles "
          f"{quartiles(wall_ratios)[0]:.3f} - {quartiles(wall_ratios)[2]:.3f})")


if __name__ == "__main__":
    main()
