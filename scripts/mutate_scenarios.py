#!/usr/bin/env python3
"""Mutation run over the shipped scenarios (docs/fuzzing.md).

    scripts/mutate_scenarios.py STEPSIM [-n N] [--seed S] [--timeout SEC] [-j JOBS] [--save DIR]

Makes N mutants of scenarios/*.yaml and validation/*.csv (numbers made huge, negative, NaN or
1e400; keys deleted or duplicated; values of another type; stray bytes), runs the command that
takes each (`run`, `job`, `plan`, `search`; `check-against` for a CSV) with STEPSIM -- an
AddressSanitizer + UBSan build -- and reports:
  crash  exit >= 128 (a signal) or sanitizer output on stderr
  hang   still running after --timeout seconds
  exit   an exit code other than 0, 2 or 3 (1: an internal error on bad input)
  shape  exit 2 or 3 without exactly one line `error: ...` of printable text on stderr
With --extremes, instead of random mutants: every number of every shipped file, one at a time,
set to each of EXTREMES (its unit kept), in file order.
Offenders are written to --save (one file each, the command in a first comment line).
Exits 1 if there was any offender. Python 3 standard library only.
"""
import argparse
import concurrent.futures
import hashlib
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?([eE][-+]?\d+)?(?=[A-Za-z%/]*\b)")
BAD_NUMBERS = ["99999999999999999999", "1e400", "-1e400", "2147483648", "4294967297", "9223372036854775808",
               "-1", "-2147483649", "0", "-0", ".nan", "nan", ".inf", "-.inf", "1e-300", "0.0000001", "1e18",
               "1e30"]  # with a unit, 1e30 passes int128 on the way to int64 (units.cpp)
BAD_VALUES = ["[1, 2]", "{a: 1}", "[]", "{}", "null", "~", "true", "'text'", "[[1]]", "{file: /dev/null}",
              "!!binary aGVsbG8=", "&a [*a]", "\"\\x01\\xff\"", "-", "''"]
BAD_BYTES = [b"\x00", b"\xff", b"\xfe\xff", b"\x1b[31m", b"\t", b"\r", b"\x7f", b"\xc3", b"\xe2\x80\xae", b"{",
             b"[", b":", b"&", b"*", b"!", b"%", b"@", b"`", b"\n  - ", b"\n---\n", b"'", b'"']


# Given efficiencies: each row is predicted once, without the calibration's fit (seconds under the sanitizers).
CHECK_AGAINST = ["check-against", "--efficiency", "0.7,0.5,0.8,0.8,0.8,0.2", "--jobs", "1"]


def command_for(text):
    """The stepsim command that takes a scenario, from its top-level sections."""
    tops = set(re.findall(r"^([a-z_]+):", text, re.M))
    if "search" in tops:
        return ["search"]
    if "job" in tops:
        return ["job", "--runs", "20"]
    if "plan" in tops:
        return ["plan"]
    return ["run"]


# Past int32, at int64's end, and (with a unit) past int128 on the way: where products and sums
# of counts overflow. Setting every number of the shipped files to each found 30 offenders.
EXTREMES = ["2147483647", "9223372036854775807", "1e30"]


def extremes(base):
    """Every number of every shipped file set to each of EXTREMES, one at a time."""
    for name, data, cmd in base:
        text = data.decode("utf-8", "replace")
        for m in NUMBER.finditer(text):
            if text.rfind("#", text.rfind("\n", 0, m.start()) + 1, m.start()) >= 0:
                continue  # in a comment
            for x in EXTREMES:
                yield name, (text[:m.start()] + x + text[m.end():]).encode(), cmd


def mutate_numbers(data, rng):
    matches = list(NUMBER.finditer(data.decode("utf-8", "replace")))
    if not matches:
        return data
    text = data.decode("utf-8", "replace")
    m = rng.choice(matches)
    return (text[:m.start()] + rng.choice(BAD_NUMBERS) + text[m.end():]).encode()


def keyed_lines(lines):
    return [i for i, l in enumerate(lines) if re.match(rb"^\s*[A-Za-z_]+:", l)]


def delete_key(data, rng):
    lines = data.split(b"\n")
    keys = keyed_lines(lines)
    if keys:
        del lines[rng.choice(keys)]
    return b"\n".join(lines)


def duplicate_key(data, rng):
    lines = data.split(b"\n")
    keys = keyed_lines(lines)
    if keys:
        i = rng.choice(keys)
        lines.insert(i + 1, lines[i])
    return b"\n".join(lines)


def swap_type(data, rng):
    lines = data.split(b"\n")
    keys = [i for i in keyed_lines(lines) if re.match(rb"^\s*[A-Za-z_]+:\s*\S", lines[i])]
    if keys:
        i = rng.choice(keys)
        head = re.match(rb"^(\s*[A-Za-z_]+:\s*)", lines[i]).group(1)
        lines[i] = head + rng.choice(BAD_VALUES).encode()
    return b"\n".join(lines)


def insert_bytes(data, rng):
    at = rng.randrange(len(data) + 1)
    return data[:at] + rng.choice(BAD_BYTES) + data[at:]


def truncate(data, rng):
    return data[:rng.randrange(len(data) + 1)]


MUTATIONS = [(mutate_numbers, 5), (delete_key, 2), (duplicate_key, 1), (swap_type, 3), (insert_bytes, 2),
             (truncate, 1)]


def mutant(data, rng):
    funcs = [f for f, w in MUTATIONS for _ in range(w)]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        data = rng.choice(funcs)(data, rng)
    return data


def verdict(code, err, timed_out):
    """The category of one run, or None if it behaved."""
    if timed_out:
        return "hang"
    if code >= 128 or code < 0 or b"Sanitizer" in err or b"runtime error:" in err:
        return "crash"
    if code not in (0, 2, 3):
        return "exit"
    if code in (2, 3):
        lines = [l for l in err.split(b"\n") if l.startswith(b"error: ")]
        printable = all(32 <= c < 127 or c >= 128 for c in err.rstrip(b"\n"))
        if len(lines) != 1 or err.count(b"\n") > 1 or not printable:
            return "shape"
    return None


def run(stepsim, cmd, path, timeout):
    started = time.monotonic()
    try:
        p = subprocess.run([stepsim] + cmd[:1] + [path] + cmd[1:], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stderr, False, time.monotonic() - started
    except subprocess.TimeoutExpired as e:
        return -1, e.stderr or b"", True, time.monotonic() - started


def workdir():
    """A folder with the scenarios' model and hardware folders, so `file:` references resolve."""
    tmp = tempfile.mkdtemp(prefix="stepsim-mutants-")
    src = os.path.join(ROOT, "scenarios")
    for name in os.listdir(src):
        if not name.endswith(".yaml"):
            os.symlink(os.path.join(src, name), os.path.join(tmp, name))
    return tmp


def shipped():
    """(folder, name) of every shipped scenario and measured-run table, in name order."""
    for folder, ext in (("scenarios", ".yaml"), ("validation", ".csv")):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if name.endswith(ext):
                yield folder, name


def originals(stepsim, timeout):
    """Shipped inputs that run cleanly within the timeout (the others cannot be judged)."""
    out = []
    for folder, name in shipped():
        path = os.path.join(ROOT, folder, name)
        data = open(path, "rb").read()
        cmd = CHECK_AGAINST if name.endswith(".csv") else command_for(data.decode("utf-8", "replace"))
        code, err, timed_out, secs = run(stepsim, cmd, path, timeout)
        if verdict(code, err, timed_out) or secs > timeout / 2:
            print(f"skipped {name}: exit {code} in {secs:.1f} s as shipped", file=sys.stderr)
            continue
        out.append((name, data, cmd))
    return out


def save(folder, data, cmd, name, category, code):
    os.makedirs(folder, exist_ok=True)
    digest = hashlib.sha1(data).hexdigest()[:12]
    path = os.path.join(folder, f"mutant-{category}-{digest}{os.path.splitext(name)[1]}")
    with open(path, "wb") as f:
        f.write(f"# {category}: stepsim {' '.join(cmd[:1] + [name] + cmd[1:])}: exit {code}\n".encode())
        f.write(data)
    return path


def judge(stepsim, job, timeout, dirs):
    """Runs one mutant (name, bytes, cmd) in a free scratch folder; returns (code, err, timed_out)."""
    name, data, cmd = job
    folder = dirs.get()
    try:
        path = os.path.join(folder, name)
        with open(path, "wb") as f:
            f.write(data)
        code, err, timed_out, _ = run(stepsim, cmd, path, timeout)
        return code, err, timed_out
    finally:
        dirs.put(folder)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("stepsim", help="stepsim built with -fsanitize=address,undefined")
    ap.add_argument("-n", type=int, default=1000, help="mutants (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds before a run counts as a hang")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                    help="mutants run at once (default: every core); the mutants and the report do not depend on it")
    ap.add_argument("--save", default=os.path.join(ROOT, "tests", "fuzz_regressions"))
    ap.add_argument("--extremes", action="store_true", help="every number set to each extreme instead of -n mutants")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    base = originals(a.stepsim, a.timeout)
    # Every mutant is made before any runs, from one generator: the same seed gives the same
    # mutants and the same report (in mutant order) whatever --jobs.
    jobs = []
    if a.extremes:
        jobs = list(extremes(base))
        a.n = len(jobs)
    for _ in range(0 if a.extremes else a.n):
        name, data, cmd = rng.choice(base)
        jobs.append((name, mutant(data, rng), cmd))
    dirs = queue.Queue()
    for _ in range(max(1, a.jobs)):
        dirs.put(workdir())
    counts, offenders, started = Counter(), [], time.monotonic()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
            results = pool.map(lambda j: judge(a.stepsim, j, a.timeout, dirs), jobs)
            for i, ((name, m, cmd), (code, err, timed_out)) in enumerate(zip(jobs, results), 1):
                counts[f"exit {code}" if not timed_out else "timeout"] += 1
                category = verdict(code, err, timed_out)
                if category:
                    saved = save(a.save, m, cmd, name, category, code)
                    first = err.decode("utf-8", "replace").strip().split("\n")[0][:160]
                    offenders.append((category, saved, first))
                    print(f"{category}: {saved}: {first}", file=sys.stderr)
                if i % 500 == 0 or i == a.n:
                    print(f"mutants: {i} of {a.n} run, {len(offenders)} offender(s), "
                          f"{time.monotonic() - started:.0f} s", file=sys.stderr)
    finally:
        while not dirs.empty():
            shutil.rmtree(dirs.get())
    secs = time.monotonic() - started
    print(f"{a.n} mutants of {len(base)} scenarios and tables in {secs:.0f} s: " +
          ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    by = Counter(c for c, _, _ in offenders)
    print(f"offenders: {len(offenders)}" + "".join(f", {k}: {v}" for k, v in sorted(by.items())))
    return 1 if offenders else 0


if __name__ == "__main__":
    sys.exit(main())
