#!/usr/bin/env bash
# The command line's one voice (docs/cli.md): overview, help, --version, our messages and exit
# codes for usage errors, did-you-mean, wrong scenario kinds, job --case / --trace checks, the
# skip reasons of compare, --verbose / --quiet, progress only on a terminal, bench merge.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
expect() {  # expect CODE TEXT WHERE: exit CODE and TEXT in $WHERE (out or err)
  [[ $code == "$1" ]] || fail "exit $code, expected $1 (stdout: $out; stderr: $err)"
  local where="${!3}"
  [[ "$where" == *"$2"* ]] || fail "'$2' not in $3: $where"
}

# The overview: `stepsim help` and `--help` on stdout, exit 0; `stepsim` alone on stderr, exit 2.
run "$stepsim" help; expect 0 "commands:" out
for c in run compare export-schedule validate bench job plan help; do [[ "$out" == *"  $c "* ]] || fail "overview lacks $c"; done
[[ "$out" == *"data_parallel"*"run, compare, validate"* ]] || fail "overview lacks the scenario kinds"
[[ "$out" == *"job, validate"* ]] || fail "overview lacks the job kind's command"
help="$out"
run "$stepsim" --help; expect 0 "commands:" out
[[ "$out" == "$help" ]] || fail "--help differs from help"
run "$stepsim"; expect 2 "no command given" err
[[ "$err" == *"commands:"* && -z "$out" ]] || fail "bare stepsim: overview on stderr only"
run "$stepsim" help run; expect 0 "--schedule" out
run "$stepsim" help rnu; expect 2 "did you mean 'run'?" err

# --version: the CMake project version.
version="$(sed -n 's/^project(stepsim VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
run "$stepsim" --version; expect 0 "stepsim $version" out

# Unknown commands and options: exit 2, did-you-mean.
run "$stepsim" rnu scenarios/book-pipeline.yaml; expect 2 "unknown command 'rnu'; did you mean 'run'?" err
run "$stepsim" comapre scenarios/book-pipeline.yaml; expect 2 "did you mean 'compare'?" err
run "$stepsim" run scenarios/book-pipeline.yaml --jsn; expect 2 "run: unknown option '--jsn'; did you mean '--json'?" err
run "$stepsim" plan scenarios/design-case.yaml --sweeep cards=16:32:16; expect 2 "did you mean '--sweep'?" err
run "$stepsim" bench merge a.json -o b.json --alow-partial; expect 2 "bench merge: unknown option '--alow-partial'; did you mean '--allow-partial'?" err
# Conflicting or incomplete flags: exit 2 with the flags named.
run "$stepsim" run scenarios/book-pipeline.yaml --gantt --json; expect 2 "run: --json excludes --gantt: choose one" err
run "$stepsim" run scenarios/book-pipeline.yaml --width 80; expect 2 "--width requires --gantt" err
run "$stepsim" plan scenarios/design-case.yaml --json --csv; expect 2 "choose one of --json and --csv" err
run "$stepsim" --verbose --quiet help; expect 2 "choose one of --verbose and --quiet" err
run "$stepsim" job scenarios/job-1024.yaml --runs 0; expect 2 "--runs" err

# Schedules: did-you-mean in run and compare.
run "$stepsim" compare scenarios/book-pipeline.yaml --schedules 1f1b,zbh3; expect 2 "unknown schedule 'zbh3'; did you mean 'zb-h1'?" err
run "$stepsim" run scenarios/book-pipeline.yaml --schedule interleavd; expect 2 "did you mean 'interleaved-1f1b'?" err
run "$stepsim" compare scenarios/rl-stages.yaml --schedules 1f1b; expect 2 "compares its variants, not schedules" err
# Lists: an empty item (a stray comma) refused, not dropped; a list option may be repeated.
run "$stepsim" compare scenarios/book-pipeline.yaml --schedules 1f1b,zb-h1,1f1b; expect 2 "error: --schedules: 1f1b named twice" err
run "$stepsim" compare scenarios/book-pipeline.yaml --schedules 1f1b,,zb-h1,
expect 2 "error: compare: --schedules: an empty item in '1f1b,,zb-h1,': a comma too many?" err
run "$stepsim" check-against validation/megatron_sc21.csv --fit gemm,; expect 2 "--fit: an empty item in 'gemm,'" err
run "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --export "$tmp/x.yaml" --pick 1,x
expect 2 "error: search: --pick: 'x' is not a whole number" err
run "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --export "$tmp/x.yaml" --cards 0; expect 2 "--cards: Value 0 not in range" err
[[ ! -e "$tmp/x.yaml" ]] || fail "a refused --pick wrote its file"
"$stepsim" compare scenarios/book-pipeline.yaml --schedules 1f1b --schedules zb-h1 --json >"$tmp/two.json" || fail "repeated --schedules"
[[ $(grep -c '"schedule"' "$tmp/two.json") == 2 ]] || fail "repeated --schedules: not both rows: $(head -c 300 "$tmp/two.json")"

# A scenario of the wrong kind names the command that takes it.
run "$stepsim" run scenarios/job-1024.yaml; expect 2 "use \`stepsim job scenarios/job-1024.yaml\`" err
[[ "$err" == "error: scenarios/job-1024.yaml:"*": job: "* ]] || fail "wrong kind: not file:line: key: $err"
run "$stepsim" compare scenarios/resource-bill.yaml; expect 2 "use \`stepsim plan scenarios/resource-bill.yaml\`" err
run "$stepsim" job scenarios/book-pipeline.yaml; expect 2 "use \`stepsim run scenarios/book-pipeline.yaml\`" err
run "$stepsim" plan scenarios/moe-routing.yaml; expect 2 "needs a 'plan' section; this is a 'moe' scenario" err
run "$stepsim" export-schedule scenarios/dp-buckets.yaml; expect 2 "use \`stepsim run scenarios/dp-buckets.yaml\`" err

# job --case: the cases listed with a did-you-mean; --trace without a case fails before any run.
run "$stepsim" job scenarios/design-case.yaml --case "48 card"
expect 2 "no case named '48 card'; did you mean '48 cards'? (cases: 32 cards, 48 cards)" err
run "$stepsim" plan scenarios/design-case.yaml --sweep cards=16:32:16 --case 32card; expect 2 "did you mean '32 cards'?" err
run "$stepsim" plan scenarios/design-case.yaml --case nope; expect 2 "error: plan: --case requires --sweep" err
start=$(date +%s%N)
run "$stepsim" job scenarios/design-case.yaml --runs 1000000 --trace "$tmp/t.json"
expect 2 "pick it with --case NAME (32 cards, 48 cards)" err
[[ "$err" != *"runs of"* ]] || fail "job --trace ran before failing: $err"
(( ($(date +%s%N) - start) / 1000000 < 5000 )) || fail "job --trace took over 5 s to fail"
[[ ! -e "$tmp/t.json" ]] || fail "job --trace wrote a trace"

# compare's skip reasons name the schedule once.
run "$stepsim" compare bench/suites/pipeline-base.yaml --set pipeline.stages=3
[[ $code == 0 ]] || fail "compare with 3 stages exit $code: $err"
grep -q "^skipped dualpipe: dualpipe needs an even number of stages (got 3)$" "$tmp/err" || fail "no dualpipe skip line: $err"
grep -q "^skipped interleaved-1f1b: Megatron-LM's interleaved order" "$tmp/err" || fail "no interleaved skip line: $err"
if grep -Eq "^skipped ([a-z0-9-]+): \1:" "$tmp/err"; then fail "skip reason repeats its prefix: $err"; fi
run "$stepsim" compare bench/suites/pipeline-base.yaml --set pipeline.stages=3 --quiet
[[ $code == 0 && -z "$err" ]] || fail "compare --quiet still says: $err"

# --verbose adds debug notes on stderr, stdout unchanged; a warning, and --quiet silencing it.
run "$stepsim" run scenarios/book-pipeline.yaml; plain="$out"
run "$stepsim" run scenarios/book-pipeline.yaml --verbose; expect 0 "debug: scenarios/book-pipeline.yaml: a 'pipeline' scenario" err
[[ "$out" == "$plain" ]] || fail "--verbose changed stdout"
run "$stepsim" --verbose run scenarios/book-pipeline.yaml; expect 0 "debug: " err
# ... and how many ops a step simulated: a pipeline's (2pm + p + 2(p-1)m for 1F1B), a data-parallel
# step's with the ranks it simulated (one when identical ranks are folded, same step time).
run "$stepsim" --verbose run bench/suites/pipeline-base.yaml --set pipeline.stages=4 --set pipeline.microbatches=8
expect 0 "debug: bench/suites/pipeline-base.yaml: 116 ops simulated, step" err
run "$stepsim" --verbose run scenarios/zero3-design-48.yaml --json
expect 0 "debug: scenarios/zero3-design-48.yaml: 1521 ops simulated (1 of 48 ranks), step 52.8 s" err
run "$stepsim" --verbose run scenarios/zero3-design-48.yaml --set data_parallel.fold=false --json
expect 0 "debug: scenarios/zero3-design-48.yaml: 73920 ops simulated (48 of 48 ranks), step 52.8 s" err
cat >"$tmp/split.yaml" <<'YAML'
name: split
pipeline:
  stages: 2
  microbatches: 4
  schedule: 1f1b
  time: {forward: 1ms, backward: 2ms, backward_input: 1ms, backward_weight: 1.5ms}
YAML
run "$stepsim" run "$tmp/split.yaml"
expect 0 "warning: $tmp/split.yaml: pipeline.time.backward: stage 0: backward 2.0 ms is not backward_input + backward_weight = 2.5 ms" err
run "$stepsim" validate "$tmp/split.yaml"; expect 0 "warning: " err
run "$stepsim" run "$tmp/split.yaml" --quiet; [[ $code == 0 && -z "$err" ]] || fail "--quiet: exit $code, stderr '$err'"
run "$stepsim" job scenarios/job-storage.yaml --quiet; [[ $code == 0 && -z "$err" ]] || fail "job --quiet: stderr '$err'"

# Progress: on a terminal only, never with --json. `script` gives the command a terminal. The
# count is the simulated runs: 400 x (1 + the 6 checkpoint intervals job-1024 compares) = 2800.
if command -v script >/dev/null; then
  script -qec "$stepsim job scenarios/job-1024.yaml --runs 400 --threads 1 >/dev/null" /dev/null >"$tmp/tty.txt" </dev/null
  grep -q "job: [0-9]*/2800 runs (" "$tmp/tty.txt" || fail "no progress on a terminal: $(cat -v "$tmp/tty.txt")"
  script -qec "$stepsim job scenarios/job-1024.yaml --runs 400 --threads 1 --json >/dev/null" /dev/null >"$tmp/tty.txt" </dev/null
  if grep -q " runs (" "$tmp/tty.txt"; then fail "progress with --json"; fi
  # compare: one step per schedule simulated (book-pipeline: the 7 schedule families), counted as
  # they finish on the threads (which counts show depends on which finishes first; the last does).
  script -qec "$stepsim compare scenarios/book-pipeline.yaml >/dev/null" /dev/null >"$tmp/tty.txt" </dev/null
  grep -q "compare: 7/7 schedules (100%)" "$tmp/tty.txt" || fail "no compare progress on a terminal: $(cat -v "$tmp/tty.txt")"
fi
run "$stepsim" job scenarios/job-1024.yaml --runs 400
if grep -q " runs (" "$tmp/err"; then fail "progress without a terminal"; fi

# bench merge with a shard missing: exit 4, nothing written, no "results in".
suite=bench/suites/pipeline.yaml
"$stepsim" bench "$suite" --shard 0/3 -j 1 -o "$tmp/shard0.json" -q >/dev/null || fail "bench shard"
run "$stepsim" bench merge "$tmp/shard0.json" -o "$tmp/part.json"
expect 4 "nothing written" err
[[ ! -e "$tmp/part.json" && ! -e "$tmp/part.csv" ]] || fail "bench merge wrote a partial result"
[[ "$out$err" != *"results in"* ]] || fail "bench merge names results it did not write"
run "$stepsim" bench merge "$tmp/shard0.json" -o "$tmp/part.json" --allow-partial
expect 0 "results in $tmp/part.json" out
[[ -s "$tmp/part.json" ]] || fail "--allow-partial wrote nothing"
echo "cli_voice: ok"
