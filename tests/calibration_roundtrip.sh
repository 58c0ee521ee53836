#!/usr/bin/env bash
# calibrate and check-against round trip (docs/calibration.md, "Calibration"): 24 random small layouts
# (fixed seed) are predicted by check-against with KNOWN efficiencies; those predictions, written
# as the measured column of a new CSV, are fitted by `stepsim calibrate`. Checked against the known
# efficiencies: the written ones are them (to the error the fit's residual allows, plus the
# file's 4 decimals), and check-against with them predicts every row with ~0 error.
# Identifiability is checked first: the rows' log-Jacobian (by check-against at perturbed
# efficiencies) must pin all six parameters (|J^+| bounded), or the test says which is loose.
# Usage: bash tests/calibration_roundtrip.sh /path/to/stepsim   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

python3 - "$stepsim" "$tmp" <<'PY'
import io, json, math, random, re, subprocess, sys

stepsim, tmp = sys.argv[1], sys.argv[2]
NAMES = ["gemm", "attention", "memory", "fabric", "network", "contention"]
HEAD = ("tbl,model,L,h,heads,kv,ffn,vocab,seq,hw,ngpu,tp,pp,dp,vpp,sched,mbs,gbs,recomp,sp,zero,"
        "overlap_dp,overlap_pp,attention,grad_bytes,metric,value,fit")


def run(*args):
    p = subprocess.run([stepsim, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def layout(rng, i):
    """A small random job on A100 nodes of 8 (up to 16 nodes): a row of the CSV, value 1."""
    h, seq = rng.choice([512, 1024, 2048]), rng.choice([1024, 4096, 8192])
    tp, pp, dp = rng.choice([1, 2, 4, 8]), rng.choice([1, 2, 4]), rng.choice([1, 2, 4, 8, 16, 32])
    mbs = rng.choice([1, 2])
    zero = rng.choice([0, 1, 3, 3]) if pp == 1 else 0
    cells = ["RT", f"m{i}", rng.choice([4, 8]), h, 8, 8, 4 * h, 32000, seq, "a100-sxm-80gb", tp * pp * dp, tp, pp,
             dp, 1, "1f1b", mbs, dp * mbs * rng.choice([1, 2, 4]), rng.choice(["none", "selective", "full"]),
             rng.choice([0, 1]) if tp > 1 else 0, zero, rng.choice([0, 1]), rng.choice([0, 1]),
             rng.choice(["flash", "unfused"]), rng.choice([2, 4]),
             rng.choice(["iteration_s", "tflops_hw", "tflops_sc21", "layer_fwd_ms", "layer_bwd_ms"]), 1, 1]
    return ",".join(map(str, cells))


def write(name, rows):
    path = f"{tmp}/{name}.csv"
    with open(path, "w") as f:
        f.write(HEAD + "\n" + "\n".join(rows) + "\n")
    return path


def predict(path, eff):
    code, out, err = run("check-against", path, "--efficiency", ",".join(repr(e) for e in eff), "--json", "-j", "2")
    assert code == 0, err
    return [r["predicted"] for r in json.load(io.StringIO(out))["files"][0]["rows"]]


def pinv_bound(J):
    """sqrt(trace((J^T J)^-1)) >= |J^+|_2, by Gauss-Jordan (no numpy); inf when singular."""
    n = len(J[0])
    M = [[sum(r[a] * r[b] for r in J) for b in range(n)] + [float(a == b) for b in range(n)] for a in range(n)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(M[r][c]))
        if abs(M[piv][c]) < 1e-12:
            return math.inf
        M[c], M[piv] = M[piv], M[c]
        M[c] = [x / M[c][c] for x in M[c]]
        for r in range(n):
            if r != c:
                M[r] = [x - M[r][c] * y for x, y in zip(M[r], M[c])]
    return math.sqrt(sum(M[a][n + a] for a in range(n)))


rng = random.Random(7)
known = [round(rng.uniform(0.3, 0.9), 4) for _ in range(5)] + [round(rng.uniform(0.1, 0.6), 4)]
rows = []
while len(rows) < 24:  # layouts the CLI refuses (memory, divisibility) are drawn again
    r = layout(rng, len(rows))
    if run("check-against", write("one", [r]), "--efficiency", "0.7,0.5,0.8,0.8,0.8,0.2")[0] == 0:
        rows.append(r)
truth = predict(write("layouts", rows), known)

# Identifiability: d log(prediction) / d log(efficiency) at the known point, by +-1 % steps.
J = [[0.0] * 6 for _ in rows]
for j in range(6):
    up, down = list(known), list(known)
    up[j] *= math.exp(0.01)
    down[j] *= math.exp(-0.01)
    for i, (a, b) in enumerate(zip(predict(f"{tmp}/layouts.csv", up), predict(f"{tmp}/layouts.csv", down))):
        J[i][j] = math.log(a / b) / 0.02
for j in range(6):
    assert max(abs(row[j]) for row in J) > 0.02, f"no row exercises {NAMES[j]}"
bound = pinv_bound(J)
assert bound <= 40, f"the rows pin the efficiencies loosely: |J+| {bound:.1f}"

# The measured CSV: the known predictions at full precision (repr round-trips a double).
measured = write("measured", [re.sub(r",1,1$", f",{v!r},1", r) for r, v in zip(rows, truth)])
code, out, err = run("calibrate", measured, "-o", f"{tmp}/hw.yaml", "-j", "2")
assert code == 0, err
yaml = open(f"{tmp}/hw.yaml").read()
written = [float(re.search(rf"\b{n}: ([0-9.]+)", yaml).group(1)) for n in NAMES]
rms = float(re.search(r"rms log residual ([0-9.]+)", yaml).group(1))
# The same fit at full precision (check-against fits on the fit=1 rows: all of them here).
code, out, err = run("check-against", measured, "--json", "-j", "2")
assert code == 0, err
d = json.load(io.StringIO(out))
fitted = [d["calibration"]["a100-sxm-80gb"][n] for n in NAMES]
r = [math.log(1 + row["error"]) for row in d["files"][0]["rows"]]
norm_r = math.sqrt(sum(x * x for x in r))
# Exact data: the fit's residual is ~0 (simulated times are whole ns: ~1e-9 of a step), and to
# first order the log-efficiency error is J^+ r (x2 for the rest).
assert rms == 0 and norm_r <= 1e-5, (rms, norm_r)  # rms as printed: 0.0000
for n, k, f, w in zip(NAMES, known, fitted, written):
    assert abs(math.log(f / k)) <= 2 * bound * norm_r + 1e-9, (n, k, f, bound, norm_r)
    assert abs(w - k) <= 0.5e-4 + k * 2 * bound * norm_r, (n, k, w)  # + the file's 4 decimals
# check-against with the written efficiencies: every row within what 4 decimals can move it
# (|d log pred / d log e| <= max |J| per parameter, each rounded by <= 0.5e-4 / e).
code, out, err = run("check-against", measured, "--efficiency", ",".join(map(str, written)), "--json")
assert code == 0, err
slack = sum(max(abs(row[j]) for row in J) * 0.5e-4 / known[j] for j in range(6)) * 1.5 + 1e-8
errors = [abs(row["error"]) for row in json.load(io.StringIO(out))["files"][0]["rows"]]
assert max(errors) <= slack, (max(errors), slack)
worst = max(abs(math.log(f / k)) for f, k in zip(fitted, known))
cols = [round(max(abs(x[j]) for x in J), 3) for j in range(6)]
print(f"round trip: {len(rows)} rows, |J+| {bound:.1f}, column max |J| {cols}")
print(f"  known {known}, written {written}; |r| {norm_r:.1e}, worst log error {worst:.1e}, max error {max(errors):.1e}")
PY
echo "calibration round trip: all checks passed"
