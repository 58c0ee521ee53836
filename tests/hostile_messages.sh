#!/usr/bin/env bash
# Hostile input gets stepsim's one voice (issue 17, docs/cli.md): exit 2 and exactly one line
# `error: file:line: key: message` (or `--set: key: message`), user text escaped, whatever the
# input -- a directory, /dev/null, a file name too long for the system, 1e400 in a bench result,
# a custom schedule with many mistakes, a --set that turns a value into a map, raw bytes.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# expect CODE LINE: exit CODE and stderr exactly the one line LINE (newline-terminated).
expect() {
  [[ $code == "$1" ]] || fail "exit $code, expected $1 (stderr: $err)"
  [[ "$err" == "$2" ]] || fail "stderr is not the expected line:
  got:      $err
  expected: $2"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "stderr is not one line: $err"
}
# expect_start CODE TEXT: exit CODE and stderr one line starting with TEXT (taken literally).
expect_start() {
  [[ $code == "$1" ]] || fail "exit $code, expected $1 (stderr: $err)"
  [[ "$err" == "$2"* ]] || fail "stderr does not start with '$2': $err"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "stderr is not one line: $err"
}
# expect_shape CODE PATTERN: exit CODE and stderr one line matching the glob PATTERN.
expect_shape() {
  [[ $code == "$1" ]] || fail "exit $code, expected $1 (stderr: $err)"
  # shellcheck disable=SC2053
  [[ "$err" == $2 ]] || fail "stderr does not match '$2': $err"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "stderr is not one line: $err"
}

# A directory, an empty file, a missing file, a name too long: what the file is, not "no section".
run "$stepsim" run "$tmp"; expect 2 "error: $tmp: is a directory, not a file"
run "$stepsim" run /dev/null; expect 2 "error: /dev/null: is not a regular file (a device or a pipe)"
: >"$tmp/empty.yaml"
run "$stepsim" validate "$tmp/empty.yaml"; expect 2 "error: $tmp/empty.yaml: is empty (expected a YAML map of keys)"
run "$stepsim" run "$tmp/missing.yaml"; expect 2 "error: $tmp/missing.yaml: cannot open the file (no such file or directory)"
long="$(printf 'a%.0s' $(seq 300))"
run "$stepsim" run "$tmp/$long.yaml"; expect 2 "error: $tmp/$long.yaml: cannot open the file (file name too long)"

# A syntax error that yaml-cpp's loader passes over but the full parse of every document meets
# (found by libFuzzer; the scenario used to end as an internal error, exit 1). The file found had
# bytes that are not UTF-8, now refused first; -5 is it with those bytes replaced (U+FFFD).
f=tests/fuzz_regressions/yaml-error-past-first-document-4.yaml
run "$stepsim" validate $f; expect 2 "error: $f:1: not UTF-8 (byte 0xBA): save the file as UTF-8"
f=tests/fuzz_regressions/yaml-error-past-first-document-5.yaml
run "$stepsim" validate $f; expect 2 "error: $f:10: not valid YAML: illegal map value"
run "$stepsim" search $f; expect 2 "error: $f:10: not valid YAML: illegal map value"

# A model file name too long: in the file (its line), and from --set (blamed on --set).
sed "s|models/llama3-8b.yaml|$long.yaml|" scenarios/job-fsdp-8.yaml >"$tmp/long-model.yaml"
line="$(grep -n "$long" "$tmp/long-model.yaml" | cut -d: -f1)"
run "$stepsim" run "$tmp/long-model.yaml"
expect 2 "error: $tmp/long-model.yaml:$line: job_step.model.file: cannot open '$tmp/$long.yaml' (file name too long)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set "job_step.model.file=$long.yaml"
expect 2 "error: --set: job_step.model.file: cannot open 'scenarios/$long.yaml' (file name too long)"
run "$stepsim" run scenarios/job-fsdp-8.yaml --set "job_step.model.file=."
expect 2 "error: --set: job_step.model.file: cannot open 'scenarios/.' (is a directory)"

# Bench result files: 1e400 is JSON the reader cannot hold (exit 2, not 1); a directory.
printf '{"format": "stepsim-bench-results/1", "suite": {"variants": 1e400}}\n' >"$tmp/huge.json"
run "$stepsim" bench merge "$tmp/huge.json" -o "$tmp/merged.json"
expect_shape 2 "error: $tmp/huge.json: not valid JSON: *number overflow*1e400*"
run "$stepsim" bench merge "$tmp" -o "$tmp/merged.json"; expect 2 "error: $tmp: is a directory, not a file"
[[ ! -e "$tmp/merged.json" ]] || fail "bench merge wrote a file after bad input"

# A custom schedule with many mistakes: the first, and how many more, on one line.
cat >"$tmp/bad-plan.yaml" <<'EOF'
pipeline:
  stages: 2
  microbatches: 2
  actions: [[0F0, 0F1, 0B0, 1B1], [1F0, 1F1, 1B0, 0B1, 0F0]]
  time: {forward: 1ms, backward: 2ms}
EOF
run "$stepsim" run "$tmp/bad-plan.yaml"
expect 2 "error: $tmp/bad-plan.yaml:4: pipeline.actions: schedule 'custom' is not a valid plan: device 0: 1B1 belongs on device 1 (and 3 more)"

# --set that makes a map where a value was: blamed on --set, not on the file.
run "$stepsim" run scenarios/book-pipeline.yaml --set pipeline.stages.bogus=1
expect 2 "error: --set: pipeline.stages: expected a whole number"
# A --set that empties the only section is named, not the file's first line; so is a memory of 0.
run "$stepsim" run scenarios/book-pipeline.yaml --set pipeline=
expect 2 "error: --set: pipeline: empty: the scenario has no other section to simulate"
run "$stepsim" --max-memory 0GB run scenarios/book-pipeline.yaml
expect 2 "error: --max-memory: '0GB' is no memory: give a size like 4GB"
# Lines ended by CR alone read as one line: refused as such, not as "no section".
tr '\n' '\r' <scenarios/book-pipeline.yaml >"$tmp/cr.yaml"
run "$stepsim" run "$tmp/cr.yaml"
expect 2 "error: $tmp/cr.yaml:1: its lines end in CR alone (classic Mac OS): save it with LF (or CRLF) line ends"
# A positive duration under a nanosecond reads as 0: said so, not "must be positive".
run "$stepsim" job scenarios/job-1024.yaml --set job.step_time=1e-12s
expect 2 "error: --set: job.step_time: '1e-12s' is under a nanosecond, the simulated time's step"
# A section that only --set makes: what it lacks is --set's too (the file has no line for it).
run "$stepsim" job scenarios/book-pipeline.yaml --set job.steps=10
expect 2 "error: --set: job.step_time: missing: the time of one step (or a 'stragglers' section to simulate it)"
run "$stepsim" job scenarios/job-storage.yaml --set job.runs.bogus=99
expect 2 "error: --set: job.runs: expected a whole number"
run "$stepsim" run scenarios/moe-routing.yaml --set moe.efficiency.x.y=1
expect 2 "error: --set: moe.efficiency: expected a number"
# A key the file has, set to a bad value: --set too.
run "$stepsim" run scenarios/book-pipeline.yaml --set pipeline.microbatches=0
expect 2 "error: --set: pipeline.microbatches: must be at least 1 (got 0)"

# Raw bytes are escaped: control characters, invalid UTF-8, a newline; valid UTF-8 is kept.
printf 'pipeline:\n  stages: 2\n  microbatches: 2\n  schedule: "1f\\x01b\\u00e9"\n  time: {forward: 1ms, backward: 1ms}\n' \
  >"$tmp/bytes.yaml"
run "$stepsim" run "$tmp/bytes.yaml"
expect_start 2 "error: $tmp/bytes.yaml:4: pipeline.schedule: unknown schedule '1f\\x01bé' (known: "
printf 'pipeline:\n  stages: 2\n  \x01key\x1b[31m: 1\n' >"$tmp/raw.yaml"
run "$stepsim" run "$tmp/raw.yaml"
expect_start 2 "error: $tmp/raw.yaml:3: pipeline.\\x01key\\x1B[31m: unknown key (known here: stages,"
# Bytes that are not UTF-8 (a Latin-1 name) would end a JSON report as an internal error: refused
# as the file is read, at their line, as is a --set value.
printf 'name: caf\xe9\npipeline:\n  stages: 2\n' >"$tmp/latin1.yaml"
run "$stepsim" run "$tmp/latin1.yaml" --json
expect 2 "error: $tmp/latin1.yaml:1: not UTF-8 (byte 0xE9): save the file as UTF-8"
run "$stepsim" run scenarios/job-fsdp-8.yaml --json --set $'name=bad\xff'
expect 2 "error: --set: name: not UTF-8 (byte 0xFF)"
sed 's/^SC21,Table 1,GPT-1.7B,/SC21,Table 1,GPT-1.7B\xff,/' validation/megatron_sc21.csv >"$tmp/latin1.csv"
run "$stepsim" check-against "$tmp/latin1.csv" --json
expect 2 "error: $tmp/latin1.csv:11: not UTF-8 (byte 0xFF): save the file as UTF-8"
run "$stepsim" run scenarios/book-pipeline.yaml --set $'pipeline.schedule=one\ntwo\x07'
expect_start 2 "error: --set: pipeline.schedule: unknown schedule 'one two\\x07' (known: "
run "$stepsim" run $'bad\nname\x01.yaml'; expect 2 "error: bad\\nname\\x01.yaml: cannot open the file (no such file or directory)"

# Usage errors: exit 2 with one line (no CLI11 codes 104-109).
for args in "run" "run --bogus x" "job scenarios/job-1024.yaml --runs abc" "job scenarios/job-1024.yaml --seed -1" \
  "run x --width abc" "bench merge" "search scenarios/search-design-desk.yaml -j -5" "frob" \
  "run scenarios/book-pipeline.yaml --set"; do
  # shellcheck disable=SC2086
  run "$stepsim" $args
  expect_shape 2 "error: *"
done
# An empty output name: refused before any work, at its option (it ran the fit and then exited 1,
# or wrote a file named ".csv" beside the merged JSON, or fell back to the default name).
cp bench/suites/pipeline.baseline.json "$tmp/shard.json"
for args in "calibrate validation/megascale_megatron.csv --fit-rows -o" "plan scenarios/design-case.yaml -o" \
  "export-schedule scenarios/book-pipeline.yaml -o" "bench merge $tmp/shard.json -o" \
  "bench bench/suites/pipeline.yaml -o" "bench bench/suites/pipeline.yaml --csv" \
  "bench bench/suites/pipeline.yaml --baseline" "search scenarios/search-design-desk.yaml --shard 0/2 -o"; do
  # shellcheck disable=SC2086
  run "$stepsim" $args ""
  option=${args##* }
  [[ $option == -o ]] && option=--output
  expect_shape 2 "error: *: $option: an empty file name: give a file name (*"
done
[[ ! -e .csv && ! -e "$tmp/.csv" ]] || fail "an empty --output left a file named .csv"
# Budget options: in the words of every count option, and given once.
run "$stepsim" --max-ops 15t run scenarios/book-pipeline.yaml
expect 2 "error: --max-ops: '15t' is not a whole number (a count's suffixes are K, M, B and T, in capitals)"
run "$stepsim" --max-ops 10 --max-ops 1e9 run scenarios/book-pipeline.yaml
expect 2 "error: --max-ops: given twice: give it once"
# A command's thread option is named as CLI11 names it (job's -j is --jobs, as elsewhere).
run "$stepsim" job scenarios/job-1024.yaml -j -1
expect 2 "error: job: --jobs: must be at least 0 (got -1) (\`stepsim job --help\` lists the options)"

# An output that is the scenario being read (by any name) would replace it: refused before the run,
# the scenario untouched; an empty output name would write nothing, silently: refused too.
cp scenarios/job-fsdp-8.yaml "$tmp/own.yaml"
cp -r scenarios/models "$tmp/models"  # the files it names
before="$(cksum <"$tmp/own.yaml")"
for cmd in "run $tmp/own.yaml --html $tmp/../$(basename "$tmp")/own.yaml" "run $tmp/own.yaml --trace $tmp/own.yaml"; do
  # shellcheck disable=SC2086
  run "$stepsim" $cmd
  expect_shape 2 "error: --*: *own.yaml*this command reads*: give another file"
done
cp scenarios/search-moe-256xh100.yaml "$tmp/own-search.yaml"
run "$stepsim" search "$tmp/own-search.yaml" --export "$tmp/own-search.yaml"
expect 2 "error: --export: $tmp/own-search.yaml: this command reads it: give another file"
cmp -s scenarios/search-moe-256xh100.yaml "$tmp/own-search.yaml" || fail "search --export replaced its scenario"
[[ "$(cksum <"$tmp/own.yaml")" == "$before" ]] || fail "run replaced its scenario"
for i in 0 1; do "$stepsim" search scenarios/search-design-desk.yaml --shard "$i/2" -o "$tmp/shard$i.json" >/dev/null 2>&1; done
run "$stepsim" search merge "$tmp/shard0.json" "$tmp/shard1.json" --csv "$tmp/shard1.json"
expect 2 "error: --csv: $tmp/shard1.json: this command reads it: give another file"
# ... and so is any other file the command reads: a scenario's model or hardware file, the measured
# runs a calibration fits, a bench suite's base scenario; each untouched.
mkdir -p "$tmp/own/models" "$tmp/own/hardware" "$tmp/outs"
cp scenarios/job-gpt3-1024xa100.yaml "$tmp/own/"
cp scenarios/models/gpt3-175b.yaml "$tmp/own/models/"
cp scenarios/hardware/a100-calibrated.yaml "$tmp/own/hardware/"
cp validation/megatron_sc21.csv bench/suites/pipeline-base.yaml "$tmp/own/"
printf 'name: s\nscenario: pipeline-base.yaml\naxes:\n  stages: [2]\n' >"$tmp/own/s.yaml"
sums="$(cd "$tmp/own" && cksum models/* hardware/* ./*)"
run "$stepsim" run "$tmp/own/job-gpt3-1024xa100.yaml" --html "$tmp/own/models/gpt3-175b.yaml"
expect 2 "error: --html: $tmp/own/models/gpt3-175b.yaml: this command reads it: give another file"
run "$stepsim" compare "$tmp/own/job-gpt3-1024xa100.yaml" --trace "$tmp/own/hardware/../hardware/a100-calibrated.yaml"
expect 2 "error: --trace: $tmp/own/hardware/../hardware/a100-calibrated.yaml is $tmp/own/hardware/a100-calibrated.yaml, which this command reads: give another file"
run "$stepsim" calibrate "$tmp/own/megatron_sc21.csv" -o "$tmp/own/megatron_sc21.csv"
expect 2 "error: --output: $tmp/own/megatron_sc21.csv: this command reads it: give another file"
run "$stepsim" bench "$tmp/own/s.yaml" -o "$tmp/own/pipeline-base.yaml"
expect 2 "error: --output: $tmp/own/pipeline-base.yaml: this command reads it: give another file"
[[ "$(cd "$tmp/own" && cksum models/* hardware/* ./*)" == "$sums" ]] || fail "an input file was replaced"
# A command refused over one of its outputs writes none of them: a missing folder, a layout the
# search does not list, each before the search runs.
run "$stepsim" search scenarios/search-design-desk.yaml --csv "$tmp/outs/s.csv" --html "$tmp/outs/s.html" --export "$tmp/nodir/e.yaml"
expect 2 "error: --export: $tmp/nodir/e.yaml: no folder $tmp/nodir to write it in"
run "$stepsim" search scenarios/search-design-desk.yaml --csv "$tmp/outs/s.csv" --export "$tmp/outs/e.yaml" --pick 6
expect 2 "error: --pick: 6 is not one of the 5 layouts listed (1 to 5; --top lists more)"
run "$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/outs/t.json" --html "$tmp/nodir/x.html"
expect 2 "error: --html: $tmp/nodir/x.html: no folder $tmp/nodir to write it in"
[[ -z "$(ls "$tmp/outs")" ]] || fail "a refused command wrote $(ls "$tmp/outs")"
run "$stepsim" run scenarios/job-fsdp-8.yaml --html ""
expect 2 "error: run: --html: an empty file name: give a file name (\`stepsim run --help\` lists the options)"
# A custom order read from actions_csv that does not fit the pipeline is blamed at actions_csv,
# the CSV named (the file has no `actions` key).
"$stepsim" export-schedule scenarios/book-pipeline.yaml -o "$tmp/order.csv"
tail -1 "$tmp/order.csv" >>"$tmp/order.csv"
sed "s|schedule: 1f1b|actions_csv: order.csv|" scenarios/book-pipeline.yaml >"$tmp/order.yaml"
line="$(grep -n "actions_csv" "$tmp/order.yaml" | cut -d: -f1)"
run "$stepsim" run "$tmp/order.yaml"
expect 2 "error: $tmp/order.yaml:$line: pipeline.actions_csv: order.csv: custom schedule lists 5 devices, pipeline has 4 stages"
# Two outputs naming one file (the second would replace the first), a folder, and stdout by another
# name: refused before the run, nothing written.
run "$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/outs/a.json" --html "$tmp/outs/../outs/a.json"
expect 2 "error: --html: $tmp/outs/../outs/a.json is also --trace's file: give each output its own"
run "$stepsim" search scenarios/search-design-desk.yaml --csv "$tmp/outs/s.x" --html "$tmp/outs/s.x"
expect 2 "error: --html: $tmp/outs/s.x is also --csv's file: give each output its own"
run "$stepsim" run scenarios/book-pipeline.yaml --html "$tmp/outs"
expect 2 "error: --html: $tmp/outs: is a folder: give a file's name (in it, say)"
[[ -z "$(ls "$tmp/outs")" ]] || fail "a refused command wrote $(ls "$tmp/outs")"
code=0
"$stepsim" run scenarios/book-pipeline.yaml --trace /dev/stdout 2>"$tmp/err" | cat >/dev/null || code=$?
[[ "$(cat "$tmp/err")" == "error: --trace: /dev/stdout: is stdout, where the report goes: give a file" ]] ||
  fail "/dev/stdout: $(cat "$tmp/err")"
# A FIFO no process reads: refused, not waited on forever; with a reader, written in place.
mkfifo "$tmp/fifo"
run timeout 20 "$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/fifo"
expect 2 "error: $tmp/fifo: a FIFO that no process reads: start its reader first"
cat "$tmp/fifo" >"$tmp/from-fifo.json" &
reader=$!
# The reader may not have opened the FIFO yet (a loaded machine): stepsim then refuses it as
# above, and is run again, so that the test never waits on a reader no writer will come to.
wrote=0
for _ in $(seq 50); do
  if timeout 20 "$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/fifo" >/dev/null 2>&1; then
    wrote=1
    break
  fi
  sleep 0.2
done
[[ $wrote == 1 ]] || { kill "$reader" 2>/dev/null; fail "a trace into a FIFO with a reader"; }
wait "$reader"
python3 -c "import json, sys; json.load(open(sys.argv[1]))" "$tmp/from-fifo.json" || fail "the FIFO's trace is not JSON"
# A link is written through (its target), not replaced by a file; a dangling one makes its target.
mkdir -p "$tmp/links"
ln -s real.json "$tmp/links/trace.json"
"$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/links/trace.json" >/dev/null
[[ -L "$tmp/links/trace.json" && -s "$tmp/links/real.json" ]] || fail "the link was replaced: $(ls -l "$tmp/links")"
# Two outputs through a link to a file not made yet are one file too; a link that loops is refused.
ln -s a.json "$tmp/links/to-a.json"
run "$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/links/a.json" --html "$tmp/links/to-a.json"
expect 2 "error: --html: $tmp/links/to-a.json is also --trace's file: give each output its own"
ln -s loop.json "$tmp/links/loop.json"
run "$stepsim" run scenarios/book-pipeline.yaml --trace "$tmp/links/loop.json"
expect 2 "error: $tmp/links/loop.json: a link that loops (or a chain of more than 40 links)"
[[ -L "$tmp/links/loop.json" && ! -e "$tmp/links/a.json" ]] || fail "a refused output wrote: $(ls -l "$tmp/links")"
# A bench baseline that cannot serve refuses the command before it runs: no result files.
mkdir -p "$tmp/bench" && echo '[]' >"$tmp/bench/bad.json"
run "$stepsim" bench bench/suites/pipeline.yaml --baseline "$tmp/bench/bad.json" -o "$tmp/bench/out.json" -q
expect 2 "error: $tmp/bench/bad.json: expected a JSON object (a stepsim bench result file)"
[[ "$(ls "$tmp/bench")" == "bad.json" ]] || fail "a refused bench wrote $(ls "$tmp/bench")"
# A --set key with an empty part, a trailing dot included (job.steps. was read as job.steps).
run "$stepsim" job scenarios/job-1024.yaml --set job.steps.=1 --runs 1; expect 2 "error: --set: job.steps.: empty part in key path"
run "$stepsim" job scenarios/job-1024.yaml --set job..steps=1 --runs 1; expect 2 "error: --set: job..steps: empty part in key path"
exit 0

