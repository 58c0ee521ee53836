#!/usr/bin/env python3
"""`stepsim run --json` (the whole process) against pipeline_model.py on the same 1F1B case.

Runs them alternately ROUNDS times each, checks that both give the same step time, bubble
fraction and peak memory, and prints the median CPU time (user + sys of the child, from
getrusage: microsecond resolution) of each, peak RSS, and the ratio.

Usage: bench/reference/side_by_side.py STEPSIM [STAGES] [MICROBATCHES] [ROUNDS]   (from the source dir)
"""
import json
import os
import resource
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
stepsim = sys.argv[1]
p = int(sys.argv[2]) if len(sys.argv) > 2 else 64
m = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out), cpu, after.ru_maxrss


sim_cmd = [stepsim, "run", "bench/suites/pipeline-base.yaml", "--set", f"pipeline.stages={p}",
           "--set", f"pipeline.microbatches={m}", "--json"]
py_cmd = [sys.executable, os.path.join(here, "pipeline_model.py"), str(p), str(m)]
sim_t, py_t = [], []
for _ in range(rounds):
    s, t, _ = timed(sim_cmd)
    sim_t.append(t)
    r, t, _ = timed(py_cmd)
    py_t.append(t)
for k in ("step_time_ms", "bubble_fraction", "peak_memory_mib"):
    if s[k] != r[k]:
        sys.exit(f"results differ: {k}: stepsim {s[k]}, Python {r[k]}")
a, b = statistics.median(sim_t), statistics.median(py_t)
print(f"1F1B p={p} m={m} ({r['ops']:,} ops), same results (step {s['step_time_ms']} ms, bubble "
      f"{s['bubble_fraction']}, peak {s['peak_memory_mib']} MiB); median of {rounds} alternating runs: "
      f"stepsim {a:.3f} CPU-s ({r['ops'] / a / 1e6:.1f} M ops/CPU-s), Python {b:.2f} CPU-s: {b / a:.0f}x")
