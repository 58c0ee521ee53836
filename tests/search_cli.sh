#!/usr/bin/env bash
# `stepsim search` end to end: tables, JSON, CSV, HTML, threads, shards + merge, input errors.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"

# The design desk: 48 cards meet, 32 miss, and why.
out="$("$stepsim" search scenarios/search-design-desk.yaml 2>/dev/null)"
grep -q "fewest cards that meet the deadline: 48 (48 cards: tp 1 pp 1 dp 48 fsdp" <<<"$out"
grep -q "32 cards misses: 36.0 of 30 days" <<<"$out"
grep -q "2016 layouts considered: 1526 pruned by divisibility" <<<"$out" || fail "design desk counts: $out"

# Threads do not change the output; JSON, CSV and HTML are written.
"$stepsim" search scenarios/search-design-desk.yaml -j1 --json >"$tmp/a.json" 2>/dev/null
"$stepsim" search scenarios/search-design-desk.yaml -j2 --json --csv "$tmp/a.csv" --html "$tmp/a.html" >"$tmp/b.json" 2>/dev/null
cmp "$tmp/a.json" "$tmp/b.json"
python3 - "$tmp/a.json" "$tmp/a.csv" "$tmp/a.html" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
assert d["rank"] == "days" and len(d["top"]) == 5, d["top"]
c = d["counts"]
assert c["considered"] == c["pruned_divisibility"] + c["pruned_schedule"] + c["pruned_memory"] + c["pruned_bound"] + c["simulated"]
assert d["front_cards"] == [16, 24, 32, 48, 64], d["front_cards"]
meets = {p["cards"]: p["meets"] for p in d["per_cards"]}
assert meets[48] and not meets[32], meets
rows = list(csv.DictReader(open(sys.argv[2])))
assert len(rows) == len(d["simulated"]) and sum(int(r["front"]) for r in rows) == 5
html = open(sys.argv[3]).read()
assert html.count('class="dot"') + html.count('class="front-dot"') == len(rows)
assert html.count('class="front-dot"') == 5 and 'class="deadline"' in html
PY

# Shards + merge: the same report as one run.
for i in 0 1 2; do "$stepsim" search scenarios/search-design-desk.yaml --shard "$i/3" -o "$tmp/s$i.json" >/dev/null 2>&1; done
"$stepsim" search merge "$tmp/s0.json" "$tmp/s1.json" "$tmp/s2.json" >"$tmp/merged.txt"
"$stepsim" search scenarios/search-design-desk.yaml 2>/dev/null >"$tmp/whole.txt"
# (after the counts line: the shards' bounds prune differently)
diff <(sed '1,/layouts considered/d' "$tmp/whole.txt") <(sed '1,/layouts considered/d' "$tmp/merged.txt")
run "$stepsim" search merge "$tmp/s0.json" "$tmp/s1.json"
[[ $code == 2 ]] || fail "merge of 2 of 3 shards: exit $code"
grep -q "2 of 3 shards given" <<<"$err" || fail "merge of 2 of 3 shards: $err"
# A file that is not a shard says what one is, without the JSON library's tags; a shard's own
# `shard` is blamed on it; a scenario path not there from this folder names the shard.
echo '[1, 2]' >"$tmp/not-shard.json"
run "$stepsim" search merge "$tmp/not-shard.json" "$tmp/s1.json"
refused "error: $tmp/not-shard.json: not a search shard file (\`stepsim search FILE --shard I/N -o SHARD.json\` writes one): expected a JSON object"
# A shard carries a digest of its contents (FNV-1a 64 over the compact, key-sorted JSON without
# it): an edited shard is refused as such; resealed below, each field's own check is reached.
cat >"$tmp/reseal.py" <<'PY'
import json
def digest(j):
    c = dict(j)
    c.pop("digest", None)
    s = json.dumps(c, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    h = 14695981039346656037
    for b in s.encode():
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return "fnv1a64:%016x" % h
def reseal(j):
    return dict(j, digest=digest(j))
PY
python3 - "$tmp" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from reseal import digest, reseal
tmp = sys.argv[1]
j = json.load(open(f"{tmp}/s0.json"))
assert j["digest"] == digest(j), (j["digest"], digest(j))  # the writer's digest, reproduced
json.dump(dict(j, shard="x"), open(f"{tmp}/x-edited.json", "w"))
json.dump(reseal(dict(j, shard="x")), open(f"{tmp}/x-shard.json", "w"))
no_digest = dict(j)
del no_digest["digest"]
json.dump(no_digest, open(f"{tmp}/no-digest.json", "w"))
del j["counts"]
json.dump(reseal(j), open(f"{tmp}/no-counts.json", "w"))
PY
run "$stepsim" search merge "$tmp/x-edited.json" "$tmp/s1.json" "$tmp/s2.json"
refused "error: $tmp/x-edited.json: digest: the shard was changed after \`stepsim search --shard\` wrote it (its digest does not match its contents): run that shard again"
run "$stepsim" search merge "$tmp/no-digest.json" "$tmp/s1.json" "$tmp/s2.json"
refused "error: $tmp/no-digest.json: digest: no digest: not a shard \`stepsim search --shard\` wrote, or one cut short"
# Shards searched with other settings are not mixed.
"$stepsim" search scenarios/search-design-desk.yaml --shard 1/3 --set search.top=3 -o "$tmp/s1-top3.json" >/dev/null 2>&1
run "$stepsim" search merge "$tmp/s0.json" "$tmp/s1-top3.json" "$tmp/s2.json"
refused "error: $tmp/s1-top3.json: overrides: this shard was searched with --set search.top=3, the first one with no --set: search every shard alike"
"$stepsim" search scenarios/search-design-desk.yaml --shard 1/3 --rank cost -o "$tmp/s1-cost.json" >/dev/null 2>&1
run "$stepsim" search merge "$tmp/s0.json" "$tmp/s1-cost.json" "$tmp/s2.json"
refused "error: $tmp/s1-cost.json: rank_flag: this shard was searched with other --rank or --top than the first one"
run "$stepsim" search merge "$tmp/x-shard.json" "$tmp/s1.json" "$tmp/s2.json"
refused "error: $tmp/x-shard.json: shard: 'x' is not I/N (e.g. 0/4)"
run "$stepsim" search merge "$tmp/no-counts.json" "$tmp/s1.json" "$tmp/s2.json"
refused "error: $tmp/no-counts.json: not a search shard file (\`stepsim search FILE --shard I/N -o SHARD.json\` writes one): key 'counts' not found"
code=0
(cd "$tmp" && "$stepsim" search merge s0.json s1.json s2.json >/dev/null 2>"$tmp/elsewhere.err") || code=$?
[[ $code == 2 && "$(cat "$tmp/elsewhere.err")" == "error: s0.json: file: the search read scenarios/search-design-desk.yaml, which is not there from this folder: merge in the folder the search ran in" ]] ||
  fail "merge elsewhere: $code $(cat "$tmp/elsewhere.err")"

# The interval the days assume is said: the task's, or Young's optimum by card count.
"$stepsim" search scenarios/search-design-desk.yaml 2>/dev/null | grep -q "^task: .*, a checkpoint every 30.0 min$" ||
  fail "the design desk's interval is not said"
"$stepsim" search scenarios/search-design-desk.yaml --set 'search.checkpoint={bandwidth: 7GB/s, restore: 120s, card_mtbf: 337d}' \
  >"$tmp/young.txt" 2>/dev/null
grep -q "^task: 100000000000 tokens, deadline 30.0 days (5.0 reserved), a checkpoint every 2.1 h on 16 cards to 64.3 min on 64 (Young's optimum)$" \
  "$tmp/young.txt" || fail "Young's interval: $(grep '^task' "$tmp/young.txt")"

# Nothing fits: the nearest miss, not an empty table.
out="$("$stepsim" search scenarios/search-impossible.yaml 2>/dev/null)"
grep -q "nearest miss: no layout fits in memory" <<<"$out"
grep -q "128 cards (tp 8 pp 1, dp 16, zero 3)" <<<"$out"
grep -q "leaves out" <<<"$out" && fail "search-impossible: opening sequence_parallel and cp fits nothing, so no line: $out"

# Nothing fits because the file leaves the layout keys out: the keys are named, and the layout
# that fits once they are searched, with its simulated step and memory; all six keys of a dense
# model fit within the 4,096 layouts the second search may walk (2,240).
out="$("$stepsim" search scenarios/search-first-try.yaml 2>/dev/null)"
grep -q "^1 layout considered: 0 pruned by divisibility, 0 by schedule, 1 by memory" <<<"$out" || fail "first try: $out"
grep -Fq "  - search the layout keys this file leaves out (tp, pp, zero, recompute, sequence_parallel, cp: each is fixed at job_step's default; \`auto\` searches one): with them searched and the rest as in the nearest miss, the fastest layout that fits is 512 cards: tp 2 pp 4 dp 16 cp 4 zero 1 1f1b, mbs 1, recompute none, sp, step 7.243 s, 73.3 GiB per GPU" <<<"$out" || fail "first try suggestion: $out"
# Searching those keys by hand finds the same layout first.
sed -e 's/    global_batch: 512/    global_batch: 512\n    tp: auto\n    pp: auto\n    zero: auto\n    recompute: auto\n    sequence_parallel: auto\n    cp: auto/' \
  scenarios/search-first-try.yaml | sed 's|models/|'"$PWD"'/scenarios/models/|' >"$tmp/opened.yaml"
out="$("$stepsim" search "$tmp/opened.yaml" --top 1 2>/dev/null)"
grep -q "^2240 layouts considered" <<<"$out" || fail "first try opened by hand, its space: $out"
grep -Eq "^1 +512 +2 +4 +1 +16 +4 +1 +1f1b +1 +none +yes +7\.243 s" <<<"$out" || fail "first try opened by hand: $out"
# The pipeline's ends searched (Qwen3-235B's 94 layers): 24 (pp 4) or 12 (pp 8) a stage but the
# ends, 2 layers fewer between them, dealt all to the first, evenly, all to the last; the best
# gives both to the last stage (it holds the head); exported and merged as searched.
ends=(--set 'search.layout.pp=[2,4,8]' --set search.layout.first_chunk_layers=auto
  --set search.layout.last_chunk_layers=auto --set 'search.layout.tp=[2]' --set 'search.layout.expert_tp=[1]'
  --set search.layout.sequence_parallel=true)
"$stepsim" search scenarios/search-moe-256xh100.yaml "${ends[@]}" 2>/dev/null >"$tmp/ends.txt"
fig "^1 256 2 8 1 16 12/10 8 1 1f1b 1 full yes 9.682 s" "$tmp/ends.txt"
fig "^2 256 2 8 1 16 11/11 8 1 1f1b 1 full yes 9.700 s" "$tmp/ends.txt"
fig "^3 256 2 4 1 32 23/23 8 1 1f1b 1 full yes 9.935 s" "$tmp/ends.txt"
fig "^6 256 2 8 1 16 10/12 8 1 1f1b 1 full yes 10.344 s" "$tmp/ends.txt"
"$stepsim" search scenarios/search-moe-256xh100.yaml "${ends[@]}" --json 2>/dev/null >"$tmp/ends.json"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["top"]
got = [(e["pp"], e.get("first_chunk_layers"), e.get("last_chunk_layers")) for e in t]
assert got == [(8, None, 10), (8, 11, 11), (4, 23, 23), (4, None, 22), (4, 22, None), (8, 10, None)], got' \
  "$tmp/ends.json" || fail "ends in --json"
"$stepsim" search scenarios/search-moe-256xh100.yaml "${ends[@]}" --export "$tmp/ends.yaml" >/dev/null 2>&1
has "layout: {tp: 2, pp: 8, last_chunk_layers: 10, dp: 16," "$tmp/ends.yaml"
"$stepsim" run "$tmp/ends.yaml" >"$tmp/ends-run.txt"
has "tp 2 pp 8 (layers per chunk 7 x 12, 10) dp 16" "$tmp/ends-run.txt"
fig "step time 9.682 s" "$tmp/ends-run.txt"
for i in 0 1; do
  "$stepsim" search scenarios/search-moe-256xh100.yaml "${ends[@]}" --shard $i/2 -o "$tmp/ends$i.json" >/dev/null 2>&1
done
"$stepsim" search merge "$tmp/ends0.json" "$tmp/ends1.json" 2>/dev/null >"$tmp/ends-merged.txt"
fig "^1 256 2 8 1 16 12/10 8 1 1f1b 1 full yes 9.682 s" "$tmp/ends-merged.txt"
run "$stepsim" run scenarios/job-qwen3-235b-16k-256xh100.yaml --set job_step.layout.first_chunk_layers=auto
refused "job_step.layout.first_chunk_layers: a job step runs one layout: \`auto\` and lists are a search's"
# How many rows: the same limit and words from the flag and from the file.
run "$stepsim" search scenarios/search-first-try.yaml --top 10001
refused "error: search: --top: '10001' is too large (at most 10000)"
run "$stepsim" search scenarios/search-first-try.yaml --set search.top=10001
refused "error: --set: search.top: '10001' is too large (at most 10000)"
# FP8 is stated under the first line (every layout shares it; MFU is then against the FP8 peak);
# an accelerator without FP8 tensor cores refuses it at the key.
out="$("$stepsim" search scenarios/search-long-context-32xh100.yaml --set search.layout.fp8=true \
  --set search.layout.fp8_recipe=blockwise 2>/dev/null)"
[[ "$(sed -n 4p <<<"$out")" == "FP8 GEMMs (blockwise scaling); MFU against the FP8 peak" ]] || fail "fp8 header: $out"
run "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.fp8=true
[[ $code == 2 && "$err" == "error: --set: search.layout.fp8: a100-sxm-80gb has no FP8 tensor cores (no FP8 peak): its GEMMs run in BF16 only" ]] ||
  fail "fp8 on A100 in a search: $code $err"
# The second search holds every key but the opened ones at the nearest miss's values: the fuzzer's
# mutant of the GPT-3 search without pp (tp, v, schedule, micro-batch and recompute searched) opens
# pp, sequence_parallel and cp at tp 8, v 1, 1f1b, mbs 1, full recompute, not over all 81,480 layouts.
sed 's|models/|'"$PWD"'/scenarios/models/|; s|hardware/|'"$PWD"'/scenarios/hardware/|' \
  tests/fuzz_regressions/A-mutant-hang-c6a1b6214158.yaml >"$tmp/no-pp.yaml"
out="$("$stepsim" search "$tmp/no-pp.yaml" 2>/dev/null)"
grep -Fq "(pp, sequence_parallel, cp: each is fixed at job_step's default; \`auto\` searches one): with them searched and the rest as in the nearest miss, the fastest layout that fits is 1024 cards: tp 8 pp 8 dp 16 zero 1 1f1b, mbs 1, recompute full, sp, step 28.011 s, 13.3 GiB per GPU" <<<"$out" || fail "no-pp: $out"
# `validate` reads a search file whole (errors at file, line and key); `run` on one says which
# command takes it.
for f in scenarios/search-*.yaml; do
  [[ "$("$stepsim" validate "$f")" == "$f: ok" ]] || fail "validate $f"
done
run "$stepsim" validate scenarios/search-first-try.yaml --set search.layout.tp=3x
[[ $code == 2 && "$err" == "error: --set: search.layout.tp: '3x' is not a whole number" ]] || fail "validate bad: $err"
run "$stepsim" run scenarios/search-first-try.yaml
[[ $code == 2 && "$err" == *"search: a layout search: \`stepsim search FILE\` runs it (and \`stepsim validate FILE\` checks it); \`stepsim search FILE --export OUT.yaml\` writes a layout it finds as a job_step scenario (run, compare, job)" ]] ||
  fail "run on a search file: $code $err"
# A job_step without a layout points to the search that finds one.
printf 'name: bare\njob_step:\n  model: {file: %s/scenarios/models/llama3-8b.yaml}\n  hardware: {preset: h100-sxm, gpus: 8}\n' \
  "$PWD" >"$tmp/bare.yaml"
run "$stepsim" run "$tmp/bare.yaml"
[[ $code == 2 && "$err" == "error: $tmp/bare.yaml:3: job_step.layout: missing (tp, pp, dp, global_batch, ...); to find one, put the model and hardware under \`search:\` with layout: {global_batch: N} and run \`stepsim search\` (docs/search.md)" ]] ||
  fail "job_step without a layout: $code $err"
# An MoE file that sets the pipeline's ends but leaves pp out: its one layout cannot run, and the
# message says why; opening what it leaves out (tp, pp, sequence_parallel, cp) names one that does.
grep -v -e '^    tp: ' -e '^    pp: 4' -e '^    sequence_parallel' -e '^    expert_tp' \
  scenarios/search-moe-256xh100.yaml >"$tmp/moe-first.yaml"
out="$("$stepsim" search "$tmp/moe-first.yaml" 2>/dev/null)"
grep -Fq "nearest miss: the one layout considered cannot run: layout.first_chunk_layers: sets a pipeline end's layers but the model is one chunk" <<<"$out" || fail "moe first try: $out"
grep -Fq "(tp, pp, sequence_parallel, cp: each is fixed at job_step's default; \`auto\` searches one): with them searched and the rest as in the nearest miss, the fastest layout that fits is 256 cards: tp 1 pp 4 (ends 23/23) dp 64 ep 8 zero 1 1f1b, mbs 1, recompute full, step 10.080 s, 68.1 GiB per GPU" <<<"$out" || fail "moe first try suggestion: $out"

# The experts' TP searched (MoE parallel folding): expert TP 1 under TP 2 is the fastest, the
# unfolded TP 4 six times slower (its EP group over 4 nodes); folding without sequence
# parallelism is a divisibility prune. JSON names the expert TP only where folded; CSV always;
# shards merge to the same ranking.
out="$("$stepsim" search scenarios/search-moe-256xh100.yaml 2>/dev/null)"
grep -q "11 layouts considered: 3 pruned by divisibility, 0 by schedule, 0 by memory" <<<"$out" || fail "moe search: $out"
grep -Eq "^1 +256 +2 +4 +1 +32 +8 +1 +1 +1f1b +1 +full +yes +9\.935 s" <<<"$out" || fail "moe search best: $out"
grep -Eq "^3 +256 +4 +4 +1 +16 +8 +1 +1 +1f1b .* 10\.396 s" <<<"$out" || fail "moe search tp 4 folded: $out"
grep -Eq "^7 +256 +4 +4 +1 +16 +8 +4 +1 +1f1b .* 28\.994 s" <<<"$out" || fail "moe search tp 4 unfolded: $out"
"$stepsim" search scenarios/search-moe-256xh100.yaml --json --csv "$tmp/moe.csv" >"$tmp/moe.json" 2>/dev/null
python3 - "$tmp/moe.json" "$tmp/moe.csv" <<'PY'
import csv, json, sys
top = json.load(open(sys.argv[1]))["top"]
assert [(e["tp"], e.get("expert_tp")) for e in top[:4]] == [(2, 1), (1, None), (4, 1), (2, None)], top[:4]
rows = {int(r["index"]): r for r in csv.DictReader(open(sys.argv[2]))}
assert rows[top[0]["index"]]["expert_tp"] == "1" and rows[top[1]["index"]]["expert_tp"] == "1", rows
assert {r["expert_tp"] for r in rows.values() if r["tp"] == "4"} == {"1", "2", "4"}
PY
for i in 0 1; do "$stepsim" search scenarios/search-moe-256xh100.yaml --shard "$i/2" -o "$tmp/m$i.json" >/dev/null 2>&1; done
diff <(sed '1,/layouts considered/d' <<<"$out") <("$stepsim" search merge "$tmp/m0.json" "$tmp/m1.json" |
  sed '1,/layouts considered/d') || fail "moe merge"

# Without expert_tp in the search, the header says how to fold the experts.
sed -e '/expert_tp: auto/d' -e 's/^name: .*/name: unfolded/' scenarios/search-moe-256xh100.yaml >"$tmp/unfolded.yaml"
out="$("$stepsim" search "$tmp/unfolded.yaml" 2>/dev/null)"
grep -q "^routed experts split as attention is at every tp (expert_tp: auto also searches them folded)$" <<<"$out" ||
  fail "unfolded hint: $out"
grep -q "5 layouts considered: 0 pruned by divisibility" <<<"$out" || fail "unfolded search: $out"

# The CP exchange searched: the ring hides under the attention; a2a is a divisibility prune
# where tp x cp does not divide the 8 key/value heads.
out="$("$stepsim" search scenarios/search-long-context-32xh100.yaml 2>/dev/null)"
grep -q "12 layouts considered: 3 pruned by divisibility" <<<"$out" || fail "cp search: $out"
grep -Eq "^1 +32 +2 +1 +1 +4 +4 +p2p +1 .* 28\.217 s" <<<"$out" || fail "cp search best: $out"
grep -Eq "^2 +32 +2 +1 +1 +4 +4 +a2a +1 .* 28\.268 s" <<<"$out" || fail "cp search a2a: $out"
grep -Eq "^8 +32 +4 +1 +1 +2 +4 +all_gather +1 .* 30\.628 s" <<<"$out" || fail "cp search all-gather: $out"
# FlashAttention-2 on the same search (docs/attention.md "Attention kernels"): the header says so, every
# layout is slower, and the best stays TP 2 x CP 4, by all-to-all: the ring's four calls a pass
# each pay FlashAttention-2's tile overhead.
out="$("$stepsim" search scenarios/search-long-context-32xh100.yaml --set search.layout.attention=flash2 2>/dev/null)"
grep -q "^attention by FlashAttention-2$" <<<"$out" || fail "search flash2 header: $out"
grep -Eq "^1 +32 +2 +1 +1 +4 +4 +a2a +1 .* 41\.217 s" <<<"$out" || fail "search flash2 best: $out"
# A shard whose CP exchange is not one a shard is written with: refused, not read as the ring.
for i in 0 1; do "$stepsim" search scenarios/search-long-context-32xh100.yaml --shard "$i/2" -o "$tmp/c$i.json" >/dev/null 2>&1; done
grep -q '"cp_comm": "all_gather"' "$tmp/c0.json" "$tmp/c1.json" || fail "cp shards name no all-gather"
sed -i 's/"cp_comm": "all_gather"/"cp_comm": "ring"/' "$tmp/c0.json" "$tmp/c1.json"
for c in c0 c1; do
  python3 -c 'import json, sys; sys.path.insert(0, sys.argv[1]); from reseal import reseal; f = sys.argv[2]; json.dump(reseal(json.load(open(f))), open(f, "w"))' "$tmp" "$tmp/$c.json"
done
run "$stepsim" search merge "$tmp/c0.json" "$tmp/c1.json"
[[ $code == 2 ]] || fail "merge of a bad cp_comm: exit $code"
grep -q "not a search shard file (.*): unknown cp_comm 'ring' (p2p, all_gather or a2a)" <<<"$err" || fail "bad shard cp_comm: $err"

# Bad input: one line, file:line: key: message, exit 2.
# A card MTBF of 0 is refused as job and plan refuse it (it read as no failures); the key --set
# changed is blamed: the deadline under the reserved days, an MTBF that overflows the run.
run "$stepsim" search scenarios/search-design-desk.yaml --set search.checkpoint.card_mtbf=0s
refused "error: --set: search.checkpoint.card_mtbf: must be positive (leave it out for no failures)"
run "$stepsim" search scenarios/search-design-desk.yaml --set search.task.deadline=1s
refused "error: --set: search.task.deadline: must be longer than the 5.0 d reserved"
run "$stepsim" search scenarios/search-design-desk.yaml --set search.checkpoint.card_mtbf=1s
refused "error: --set: search.checkpoint.card_mtbf: too large: the training time"
printf 'search:\n  model: qwen3-8b\n  hardware: {preset: rtx4090, gpus: 8}\n  layout: {cp: [1, 2], cp_comm: [p2p, ring], global_batch: 8}\n' >"$tmp/bad.yaml"
run "$stepsim" search "$tmp/bad.yaml"
[[ $code == 2 ]] || fail "bad cp_comm: exit $code"
grep -q "bad.yaml:4: search.layout.cp_comm: unknown cp_comm 'ring' (p2p, all_gather, a2a or auto)" <<<"$err" || fail "bad cp_comm: $err"
printf 'search:\n  model: qwen3-8b\n  hardware: {preset: rtx4090, gpus: 8}\n  layout: {expert_tp: [1, 2], global_batch: 8}\n' >"$tmp/bad.yaml"
run "$stepsim" search "$tmp/bad.yaml"
[[ $code == 2 ]] || fail "expert_tp on a dense model: exit $code"
grep -q "bad.yaml:4: search.layout.expert_tp: expert_tp splits routed experts: the model has none" <<<"$err" || fail "expert_tp dense: $err"
printf 'search:\n  model: qwen3-8b\n  hardware: {preset: rtx4090, gpus: 8}\n  layout: {tp: [1, 3x], global_batch: 8}\n' >"$tmp/bad.yaml"
run "$stepsim" search "$tmp/bad.yaml"
[[ $code == 2 ]] || fail "bad layout: exit $code"
grep -q "bad.yaml:4: search.layout.tp: '3x' is not a whole number" <<<"$err" || fail "bad layout: $err"

# HSDP searched (docs/search.md "HSDP"): `auto` tries each ZeRO layout sharded over all its
# data-parallel ranks and over each node's; the table, the JSON and the CSV name the replicas.
"$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.dp_replicate=auto --json \
  --csv "$tmp/hsdp.csv" >"$tmp/hsdp.json" 2>/dev/null
"$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.dp_replicate=auto >"$tmp/hsdp.txt" 2>/dev/null
tr -s ' ' <"$tmp/hsdp.txt" | grep -- " 4 1024 4 16 6 16 1 x8 interleaved-1f1b 1 selective no 19.924 s 52.5%" >/dev/null ||
  { cat "$tmp/hsdp.txt"; fail "HSDP row in the search"; }
grep -q "13845 layouts considered: 9267 pruned by divisibility" "$tmp/hsdp.txt" || fail "HSDP search counts"
python3 - "$tmp/hsdp.json" "$tmp/hsdp.csv" <<'PY' || fail "HSDP in the search's JSON and CSV"
import csv, json, sys
d = json.load(open(sys.argv[1]))
top = d["top"]
assert top[3]["dp_replicate"] == 8 and top[3]["zero"] == 1 and top[3]["tp"] == 4, top[3]
assert top[2]["dp_replicate"] == 8 and top[2]["schedule"] == "dualpipe", top[2]
assert all("dp_replicate" not in t for i, t in enumerate(top) if i not in (2, 3)), top
rows = list(csv.DictReader(open(sys.argv[2])))
assert {"1", "4", "8"} <= {r["dp_replicate"] for r in rows}, {r["dp_replicate"] for r in rows}
# zero 0 has nothing to replicate; a replicated layout shards over the node's 2 data-parallel ranks.
assert all(r["dp_replicate"] == "1" for r in rows if r["zero"] == "0")
assert all(int(r["dp"]) // int(r["dp_replicate"]) == 8 // int(r["tp"]) for r in rows if r["dp_replicate"] != "1")
PY
# The merge of shards reads the replicas back.
for i in 0 1; do
  "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --set search.layout.dp_replicate=auto --shard "$i/2" \
    -o "$tmp/h$i.json" >/dev/null 2>&1
done
grep -q '"dp_replicate": 8' "$tmp/h0.json" "$tmp/h1.json" || fail "HSDP shards name no replicas"
"$stepsim" search merge "$tmp/h0.json" "$tmp/h1.json" >"$tmp/hm.txt"
tr -s ' ' <"$tmp/hm.txt" | grep -- " 4 1024 4 16 6 16 1 x8 interleaved-1f1b" >/dev/null || { cat "$tmp/hm.txt"; fail "HSDP row after a merge"; }
# recompute_layers: auto recomputes the fewest layers of each chunk that fit: TP 4 keeps 21 of its
# 23-24 layers and steps 19 % faster than every layer recomputed (9.935 s above); the header says
# so, the table `full (2)`, JSON `recompute_layers`, CSV its column; shards merge the same. Without
# the key, a search whose top recomputes every layer says how to try fewer; GPT-3's top does not.
grep -q "^full recompute of every layer (recompute_layers: auto also tries the fewest layers that fit)$" \
  <<<"$("$stepsim" search scenarios/search-moe-256xh100.yaml 2>/dev/null)" || fail "recompute_layers hint"
! "$stepsim" search scenarios/search-gpt3-1024xa100.yaml 2>/dev/null | grep "recompute_layers" >/dev/null ||
  fail "recompute_layers hint with no full recompute at the top"
part=(--set search.layout.recompute_layers=auto)
"$stepsim" search scenarios/search-moe-256xh100.yaml "${part[@]}" --json --csv "$tmp/part.csv" >"$tmp/part.json" 2>/dev/null
python3 - "$tmp/part.json" "$tmp/part.csv" <<'PY'
import csv, json, sys
d = json.load(open(sys.argv[1]))
top = d["top"]
assert [(e["tp"], e.get("recompute_layers")) for e in top[:3]] == [(4, 2), (2, 15), (1, 21)], top[:3]
assert abs(top[0]["step_s"] - 8.081) < 5e-4, top[0]["step_s"]
assert d["counts"]["considered"] == 11 and d["counts"]["over_memory_simulated"] == 0, d["counts"]
rows = {int(r["index"]): r for r in csv.DictReader(open(sys.argv[2]))}
assert rows[top[0]["index"]]["recompute_layers"] == "2", rows[top[0]["index"]]
PY
out="$("$stepsim" search scenarios/search-moe-256xh100.yaml "${part[@]}" 2>/dev/null)"
grep -q "^full recompute of the fewest layers of each chunk that fit (recompute_layers: auto)$" <<<"$out" ||
  fail "recompute_layers auto header: $out"
grep -Eq "^1 +256 +4 +4 +1 +16 +8 +1 +1 +1f1b +1 +full \(2\) +yes +8\.081 s +30\.4% +74\.2" <<<"$out" ||
  fail "recompute_layers auto best: $out"
for i in 0 1; do
  "$stepsim" search scenarios/search-moe-256xh100.yaml "${part[@]}" --shard "$i/2" -o "$tmp/p$i.json" >/dev/null 2>&1
done
diff <(sed '1,/layouts considered/d' <<<"$out") <("$stepsim" search merge "$tmp/p0.json" "$tmp/p1.json" |
  sed '1,/layouts considered/d') || fail "recompute_layers merge"
# Listed counts: one at or past every chunk's layers (23-24) is every layer, tried once (a layout
# refused anyway keeps the three).
out="$("$stepsim" search scenarios/search-moe-256xh100.yaml --set "search.layout.recompute_layers=[2, 24, 90]" 2>/dev/null)"
grep -q "^25 layouts considered: 9 pruned by divisibility, 0 by schedule, 5 by memory" <<<"$out" ||
  fail "recompute_layers list: $out"
grep -Eq "^1 +256 +4 +4 +1 +16 +8 +1 +1 +1f1b +1 +full \(2\) +yes +8\.081 s" <<<"$out" || fail "listed 2: $out"
grep -Eq " +1f1b +1 +full +yes +9\.935 s" <<<"$out" || fail "listed past the chunks: $out"
# Refused: a count below 0, and the key where no layout recomputes fully.
run "$stepsim" search scenarios/search-moe-256xh100.yaml --set search.layout.recompute_layers=-1
refused "search.layout.recompute_layers: -1 is below the minimum 0"
run "$stepsim" search scenarios/search-moe-256xh100.yaml --set search.layout.recompute=none \
  --set search.layout.recompute_layers=auto
refused "search.layout.recompute_layers: recomputes the first layers of each chunk whole: the recompute list has no full"
# keep_gathered: auto tries ZeRO-3 layouts with their gathered weights kept from forward to
# backward: at TP 4 and 8 (gathers across nodes) kept is faster; the zero column says so, JSON and
# CSV name it, shards merge the same; without the key, the header says how to try it.
kg=(--set "search.layout.tp=[1,2,4,8]" --set search.layout.zero=3 --set search.layout.keep_gathered=auto
  --set search.layout.recompute=auto --set search.layout.recompute_layers=auto --set search.layout.sequence_parallel=true)
out="$("$stepsim" search scenarios/search-first-try.yaml "${kg[@]}" 2>/dev/null)"
grep -q "^13 layouts considered: 0 pruned by divisibility, 0 by schedule, 7 by memory" <<<"$out" || fail "kept counts: $out"
grep -Eq "^3 +512 +4 +1 +1 +128 +fsdp kept +- +1 +full \(12\) +yes +8\.090 s" <<<"$out" || fail "kept tp 4: $out"
grep -Eq "^4 +512 +4 +1 +1 +128 +fsdp +- +1 +none +yes +8\.406 s" <<<"$out" || fail "regathered tp 4: $out"
grep -Eq "^5 +512 +8 +1 +1 +64 +fsdp kept .* 10\.932 s" <<<"$out" || fail "kept tp 8: $out"
"$stepsim" search scenarios/search-first-try.yaml "${kg[@]}" --json --csv "$tmp/kg.csv" >"$tmp/kg.json" 2>/dev/null
python3 - "$tmp/kg.json" "$tmp/kg.csv" <<'PY'
import csv, json, sys
top = json.load(open(sys.argv[1]))["top"]
assert [e.get("keep_gathered", False) for e in top] == [False, False, True, False, True, False], top
rows = {int(r["index"]): r for r in csv.DictReader(open(sys.argv[2]))}
assert [rows[e["index"]]["keep_gathered"] for e in top] == ["0", "0", "1", "0", "1", "0"]
PY
for i in 0 1; do "$stepsim" search scenarios/search-first-try.yaml "${kg[@]}" --shard "$i/2" -o "$tmp/k$i.json" >/dev/null 2>&1; done
diff <(sed '1,/layouts considered/d' <<<"$out") <("$stepsim" search merge "$tmp/k0.json" "$tmp/k1.json" |
  sed '1,/layouts considered/d') || fail "kept merge"
grep -q "^zero 3: each layer's weights gathered again for its backward (keep_gathered: auto also tries keeping them)$" \
  <<<"$("$stepsim" search scenarios/search-design-desk.yaml 2>/dev/null)" || fail "keep_gathered hint"
run "$stepsim" search scenarios/search-first-try.yaml --set search.layout.keep_gathered=maybe
refused "search.layout.keep_gathered: expected true, false, a list of them or auto"
# --export: a listed layout as a job_step scenario (docs/search.md "From a search to a run"). The
# GPT-3 search's model and hardware are files, rebased from scenarios/ to the export's folder;
# each pick runs to the search's step, to the nanosecond.
mkdir -p "$tmp/exports"
for pick in 1 3; do
  "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --json --export "$tmp/exports/gpt3-$pick.yaml" --pick "$pick" \
    >"$tmp/gpt3-search.json" 2>"$tmp/gpt3-search.err"
  has "layout $pick written to $tmp/exports/gpt3-$pick.yaml as a job_step scenario" "$tmp/gpt3-search.err"
  "$stepsim" run "$tmp/exports/gpt3-$pick.yaml" --json >"$tmp/gpt3-run.json"
  python3 - "$tmp/gpt3-search.json" "$tmp/gpt3-run.json" "$pick" <<'PY' || fail "export pick $pick"
import json, sys
want = json.load(open(sys.argv[1]))["top"][int(sys.argv[3]) - 1]
got = json.load(open(sys.argv[2]))
assert got["step_time_ns"] == want["step_ns"], (got["step_time_ns"], want["step_ns"])
assert got["gpus"] == want["cards"] and got["layout"]["tp"] == want["tp"] and got["layout"]["pp"] == want["pp"]
PY
done
rel="$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$PWD/scenarios/models/gpt3-175b.yaml" "$tmp/exports")"
has "model: {file: $rel}" "$tmp/exports/gpt3-1.yaml"
has "^  layout: {tp: 4, pp: 8, virtual_stages: 6, dp: 32, schedule: interleaved-1f1b, zero: 1, micro_batch: 1, global_batch: 1536, recompute: selective, attention: unfused, grad_bytes: 2}$" "$tmp/exports/gpt3-1.yaml"
has "^#   stepsim search scenarios/search-gpt3-1024xa100.yaml$" "$tmp/exports/gpt3-1.yaml"
# recompute_layers: auto exported as the count the search ran; merged shards export too.
for i in 0 1; do
  "$stepsim" search scenarios/search-moe-256xh100.yaml --set search.layout.recompute_layers=auto --shard "$i/2" \
    -o "$tmp/m$i.json" >/dev/null 2>&1
done
"$stepsim" search merge "$tmp/m0.json" "$tmp/m1.json" --export "$tmp/exports/moe.yaml" >/dev/null 2>&1
has "layout: {tp: 4, pp: 4, first_chunk_layers: 23, last_chunk_layers: 23, dp: 16, ep: 8, schedule: 1f1b, zero: 1, sequence_parallel: true, micro_batch: 1, global_batch: 1024, recompute: full, recompute_layers: " "$tmp/exports/moe.yaml"
has "^#   stepsim search scenarios/search-moe-256xh100.yaml --set 'search.layout.recompute_layers=auto'$" "$tmp/exports/moe.yaml"
fig "step time 8.081 s" <("$stepsim" run "$tmp/exports/moe.yaml")
# The exported file docs/search.md shows is the one written.
mkdir -p "$tmp/doc/out" && ln -s "$PWD/scenarios" "$tmp/doc/scenarios"
(cd "$tmp/doc" &&
  "$stepsim" search scenarios/search-moe-256xh100.yaml --set search.layout.recompute_layers=auto \
    --export out/moe-best.yaml >/dev/null 2>&1)
diff <(awk '/^`out\/moe-best.yaml`:$/ { on = 1; next } on && /^```yaml$/ { inside = 1; next }
            inside && /^```$/ { exit } inside { print }' docs/search.md) "$tmp/doc/out/moe-best.yaml" ||
  fail "docs/search.md's exported scenario is not what --export writes"
# A search with a task exports it as a `job:` section: `stepsim job` draws the failures and saves
# the search charged on average (Young's interval at the layout's 64 cards, 30 min given here).
"$stepsim" search scenarios/search-design-desk.yaml --json --export "$tmp/exports/desk.yaml" >"$tmp/desk.json" 2>/dev/null
has "^  checkpoint: {every: 30min, storage: 7GB/s}$" "$tmp/exports/desk.yaml"
"$stepsim" job "$tmp/exports/desk.yaml" --json >"$tmp/desk-job.json" 2>/dev/null
python3 - "$tmp/desk.json" "$tmp/desk-job.json" <<'PY' || fail "exported task's whole runs"
import json, sys
best = json.load(open(sys.argv[1]))["top"][0]
job = json.load(open(sys.argv[2]))
assert job["cards"] == best["cards"] == 64 and job["steps"] == 31790, (job["cards"], job["steps"])
assert abs(job["step_time_s"] - best["step_s"]) < 1e-6, (job["step_time_s"], best["step_s"])
mean = job["completion_s"]["mean"] / 86400
assert abs(mean - best["days"]) < 0.01 * best["days"], (mean, best["days"])
assert job["deadline_s"] == 30 * 86400 and job["reserved_s"] == 5 * 86400
PY
# Saves the search charged nothing for (no bandwidth) lose no work at a failure: an empty snapshot
# every step, not a restart from step 0 (which would take 85 days at the median).
sed 's/  checkpoint: {bandwidth: 7GB\/s, restore: 120s, interval: 1800s, card_mtbf: 337d}/  checkpoint: {restore: 120s, card_mtbf: 337d}/' \
  scenarios/search-design-desk.yaml >"$tmp/free-saves.yaml"
"$stepsim" search "$tmp/free-saves.yaml" --export "$tmp/exports/free.yaml" --cards 48 >"$tmp/free.txt" 2>/dev/null
has "^   48  tp 1 pp 1 dp 48 fsdp, mbs 1, recompute full   55.780 s  25.5 " "$tmp/free.txt"
has "^  checkpoint: {every_steps: 1, size: 0B, storage: 1GB/s}$" "$tmp/exports/free.yaml"
fig "^25.53 d 25.53 d" <("$stepsim" job "$tmp/exports/free.yaml" 2>/dev/null)
# Without the task's interval the search charges Young's optimum at each layout's cards: exported
# as `every: young`, which `stepsim job` works out per layout, its mean within 1 % of the days.
sed 's/, interval: 1800s//' scenarios/search-design-desk.yaml >"$tmp/young-desk.yaml"
sed -i "s|file: models/|file: $PWD/scenarios/models/|; s|file: hardware/|file: $PWD/scenarios/hardware/|" "$tmp/young-desk.yaml"
"$stepsim" search "$tmp/young-desk.yaml" --json --export "$tmp/exports/young.yaml" --cards 32,48,64 >"$tmp/young.json" 2>/dev/null
has "^  checkpoint: {every: young, storage: 7GB/s}$" "$tmp/exports/young.yaml"
"$stepsim" job "$tmp/exports/young.yaml" --json >"$tmp/young-job.json" 2>/dev/null
python3 - "$tmp/young.json" "$tmp/young-job.json" <<'PY' || fail "every: young per exported layout"
import json, sys
days = {p["cards"]: p["days"] for p in json.load(open(sys.argv[1]))["per_cards"] if "days" in p}
for case in json.load(open(sys.argv[2])):
    mean = case["completion_s"]["mean"] / 86400
    assert abs(mean - days[case["cards"]]) < 0.01 * days[case["cards"]], (case["case"], mean, days[case["cards"]])
    assert "young_interval_s" in case["checkpoint"], case["checkpoint"]
PY
# --cards: the per-card table's best at 48 cards, the fewest that meet the deadline (25.5 days).
"$stepsim" search scenarios/search-design-desk.yaml --export "$tmp/exports/desk48.yaml" --cards 48 >/dev/null 2>&1
has "^# The best layout at 48 cards (the per-card table) of$" "$tmp/exports/desk48.yaml"
has "^name: search-design-desk-48-cards$" "$tmp/exports/desk48.yaml"
fig "^25.75 d 25.74 d 25.78 d" <("$stepsim" job "$tmp/exports/desk48.yaml" 2>/dev/null)
run "$stepsim" search scenarios/search-design-desk.yaml --export "$tmp/exports/none.yaml" --cards 41
refused "error: --cards: 41 is not a card count searched (16, 24, 32, 40, 48, 56, 64)"
run "$stepsim" search scenarios/search-design-desk.yaml --export "$tmp/exports/none.yaml" --cards 40
refused "error: --cards: no layout at 40 cards: no layout divides: e.g. layout.global_batch: global batch 384 is not a multiple"
run "$stepsim" search scenarios/search-design-desk.yaml --export "$tmp/exports/none.yaml" --cards 48 --pick 2
refused "--pick excludes --cards"
[[ ! -e "$tmp/exports/none.yaml" ]] || fail "an export refused, written"
# recompute_layers lists `all` (every layer) beside counts: the MoE search's best recomputes 2 of
# each chunk's layers, the next every one; another word is refused naming what is taken.
out="$("$stepsim" search scenarios/search-moe-256xh100.yaml --set 'search.layout.recompute_layers=[all,2]' 2>/dev/null)"
fig "^1 256 4 4 1 16 8 1 1 1f1b 1 full (2) yes 8.081 s" <(echo "$out")
fig "^2 256 2 4 1 32 8 1 1 1f1b 1 full yes 9.935 s" <(echo "$out")
run "$stepsim" search scenarios/search-moe-256xh100.yaml --set 'search.layout.recompute_layers=[al,2]'
refused "search.layout.recompute_layers: 'al': expected a count of layers or all (a list of them), or auto"
# Several picks: the first the scenario's step, the others its variants, each the keys where it
# differs; `stepsim compare` runs each to the search's step (docs/search.md "Several layouts side
# by side"). The scenario after the list stays positional.
"$stepsim" search --json --export "$tmp/exports/gpt3-top3.yaml" --pick 1,2,3 scenarios/search-gpt3-1024xa100.yaml \
  >"$tmp/gpt3-search.json" 2>"$tmp/gpt3-search.err"
has "layouts 1, 2, 3 written to $tmp/exports/gpt3-top3.yaml as a job_step scenario, the first its step and the others its variants" "$tmp/gpt3-search.err"
has "^    layout-2: {layout: {virtual_stages: 4}}  # 1024 cards: tp 4 pp 8 v 4 dp 32 zero 1 interleaved-1f1b, mbs 1, recompute selective$" "$tmp/exports/gpt3-top3.yaml"
"$stepsim" compare "$tmp/exports/gpt3-top3.yaml" --json >"$tmp/gpt3-compare.json"
python3 - "$tmp/gpt3-search.json" "$tmp/gpt3-compare.json" <<'PY' || fail "export picks 1,2,3"
import json, sys
top = json.load(open(sys.argv[1]))["top"][:3]
rows = json.load(open(sys.argv[2]))
assert [r.get("variant", "base") for r in rows] == ["base", "layout-2", "layout-3"], [r.get("variant") for r in rows]
for want, got in zip(top, rows):
    assert got["step_time_ns"] == want["step_ns"], (got["step_time_ns"], want["step_ns"])
    assert (got["layout"]["tp"], got["layout"]["pp"], got["layout"]["dp"]) == (want["tp"], want["pp"], want["dp"])
PY
(cd "$tmp/doc" && "$stepsim" search scenarios/search-gpt3-1024xa100.yaml --export out/gpt3-top3.yaml --pick 1,2,3 >/dev/null 2>&1)
diff <(awk '/^`out\/gpt3-top3.yaml`.s step and variants:$/ { on = 1; next } on && /^```yaml$/ { inside = 1; next }
            inside && /^```$/ { exit } inside { print }' docs/search.md) <(grep -A3 "^  layout: " "$tmp/doc/out/gpt3-top3.yaml") ||
  fail "docs/search.md's exported variants are not what --export --pick 1,2,3 writes"
# ... and the per-card table's best at several counts, the cards a variant's `hardware: {gpus: N}`.
"$stepsim" search scenarios/search-design-desk.yaml --export "$tmp/exports/desk-cards.yaml" --cards 48,64,32 >/dev/null 2>&1
has "^# The best layouts at 48, 64 and 32 cards (the per-card table) of$" "$tmp/exports/desk-cards.yaml"
has "^    cards-64: {hardware: {gpus: 64}, layout: {dp: 64}}  # 64 cards: tp 1 pp 1 dp 64 fsdp, mbs 1, recompute full$" "$tmp/exports/desk-cards.yaml"
out="$("$stepsim" compare "$tmp/exports/desk-cards.yaml")"
# Across card counts "vs first" compares GPU time per token: 64 cards step 24.7 % faster at 0.4 % more cost.
has "GPU time per token vs first" <(echo "$out")
fig "^base 55.780 s +0.0% 1175" <(echo "$out")
fig "^cards-64 42.006 s +0.4% 1170" <(echo "$out")
fig "^cards-32 83.300 s -0.4% 1180" <(echo "$out")
run "$stepsim" search scenarios/search-moe-256xh100.yaml --export "$tmp/exports/none.yaml" --pick 2,1,2
refused "error: --pick: 2 is named twice"
run "$stepsim" search scenarios/search-design-desk.yaml --export "$tmp/exports/none.yaml" --cards 48,48
refused "error: --cards: 48 is named twice"
[[ ! -e "$tmp/exports/none.yaml" ]] || fail "an export refused, written"
# Refused: a pick past the list (before the search, nothing written), --pick alone, a shard, nothing fits.
run "$stepsim" search scenarios/search-moe-256xh100.yaml --export "$tmp/exports/none.yaml" --pick 9
refused "error: --pick: 9 is not one of the 8 layouts listed (1 to 8; --top lists more)"
[[ $(wc -l <<<"$err") == 1 && ! -e "$tmp/exports/none.yaml" ]] || fail "--pick 9: $err"
[[ -z "$out" ]] || fail "--pick 9 refused after the search's report"
run "$stepsim" search scenarios/search-moe-256xh100.yaml --pick 2
refused "--pick requires --export"
run "$stepsim" search scenarios/search-moe-256xh100.yaml --export "$tmp/exports/none.yaml" --shard 0/2
refused "error: --export: a shard lists no layouts: export from \`stepsim search merge\`"
run "$stepsim" search scenarios/search-first-try.yaml --export "$tmp/exports/none.yaml"
refused "error: --export: no layout fits: nothing written"
grep -q "^nearest miss: no layout fits in memory" <<<"$out" || fail "nothing fits: the report first"
[[ ! -e "$tmp/exports/none.yaml" ]] || fail "an export where nothing fits"
# Around a job step (docs/search.md "Around a job step"): the step's own layout beside the space,
# the layouts that rank before it counted exactly (--no-bound simulates everything and counts the
# same), its variant `own` in an export running to its own `run`'s step.
for f in job-llama70b-64xh100 job-hsdp-128xa100 job-moe-routing-256xh100; do
  "$stepsim" search "scenarios/$f.yaml" --json >"$tmp/around.json"
  "$stepsim" search "scenarios/$f.yaml" --json --no-bound >"$tmp/around-all.json"
  python3 - "$tmp/around.json" "$tmp/around-all.json" "$f" <<'PY' || fail "$f: the layouts before the step, counted"
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:3])
own = a["around"]
assert own["fits"], own
# Ranked before it: faster, or as fast in less memory.
mem = lambda e: e["memory_bytes"]["total"]
faster = sum(1 for e in b["simulated"]
             if (e["step_ns"], mem(e)) < (own["step_ns"], mem(own)))
assert own["ranked_before"] == faster == b["around"]["ranked_before"] > 0, (sys.argv[3], own["ranked_before"], faster)
PY
done
"$stepsim" search scenarios/job-llama70b-64xh100.yaml >"$tmp/around.txt"
has "^around the job step's layout: tp, pp, virtual_stages, schedule, micro_batch, recompute, zero, sequence_parallel searched" "$tmp/around.txt"
has "^the job step's own layout, 64 cards: tp 8 pp 4 v 5 dp 2 zero 1 interleaved-1f1b, mbs 1, recompute selective, sp:$" "$tmp/around.txt"
has "^  32 layouts that fit rank before it (faster, or as fast in less memory); #1 is 13.1% faster (13.526 s)$" "$tmp/around.txt"
"$stepsim" search scenarios/job-llama70b-64xh100.yaml --html "$tmp/around.html" >/dev/null
has 'id="around">The job step&#39;s own layout</h2>' "$tmp/around.html"
has "32 layouts that fit rank before it" "$tmp/around.html"
"$stepsim" run scenarios/job-llama70b-64xh100.yaml >"$tmp/own-run.txt"
fig "step time 15.561 s" "$tmp/own-run.txt"
has "^  15.561 s a step, MFU 47.8%, 49.5 of 74.5 GiB per GPU$" "$tmp/around.txt"
"$stepsim" search scenarios/job-llama70b-64xh100.yaml --export "$tmp/exports/around.yaml" >/dev/null 2>&1
"$stepsim" compare "$tmp/exports/around.yaml" >"$tmp/around-compare.txt"
fig "^own 15.561 s +15.1%" "$tmp/around-compare.txt"
# As fast in less memory ranks before it: zero 2 for zero 1 with one micro-batch a step (with
# more, each one's gradients reduce-scattered make zero 2 slower: DeepSeek-V3's zero 1 ranks
# first); the step's own layout picked is not exported twice.
"$stepsim" search scenarios/job-zero-8b-64xh100.yaml --set job_step.layout.zero=1 --set job_step.layout.global_batch=64 \
  --set job_step.layout.recompute=full --set 'search.layout.tp=[1]' --set 'search.layout.pp=[1]' \
  --set 'search.layout.recompute=[full]' --set 'search.layout.zero=[1,2]' >"$tmp/z12.txt"
has "^  1 layout that fits rank before it (faster, or as fast in less memory); #1 is as fast in 27.8 GiB per GPU$" "$tmp/z12.txt"
"$stepsim" search scenarios/job-deepseek-v3-2048xh800.yaml --set 'search.layout.tp=[1]' --export "$tmp/exports/ds.yaml" \
  >"$tmp/ds.txt" 2>&1
has "; no layout that fits ranks before it$" "$tmp/ds.txt"
! grep -q "^    own:" "$tmp/exports/ds.yaml" || fail "the step's own layout, picked, exported twice"
# Not fitting is a result; a bad key of the step is refused at it.
"$stepsim" search scenarios/job-llama70b-64xh100.yaml --set job_step.layout.micro_batch=4 >"$tmp/around-oom.txt"
has "121.7 of 74.5 GiB per GPU: does not fit; the layouts above do$" "$tmp/around-oom.txt"
run "$stepsim" search scenarios/job-llama70b-64xh100.yaml --set job_step.layout.tp=3
refused "error: --set: job_step.layout.tp: tp 3 does not divide the 64 attention heads"
# A job beside the step with tokens is the search's task: days to train for every layout and the
# step's own (55.0 analytically, as `stepsim job` draws it: 55.03 d), against its deadline; its
# saves every 2 h (`every: young`: Young's interval, fewer days).
"$stepsim" search scenarios/job-hsdp-128xa100.yaml --top 3 >"$tmp/around-task.txt"
has "^task: 2200000000000 tokens, deadline 60.0 days" "$tmp/around-task.txt"
has "^  2.263 s a step, MFU 49.7%, 47.8 of 76.0 GiB per GPU, 56.0 days (meets the 60-day deadline)$" "$tmp/around-task.txt"
"$stepsim" search scenarios/job-hsdp-128xa100.yaml --top 3 --set job.deadline=55d >"$tmp/around-task.txt"
has ", 56.0 days (misses the 55-day deadline)$" "$tmp/around-task.txt"
"$stepsim" search scenarios/job-hsdp-128xa100.yaml --top 1 --json >"$tmp/t2h.json"
"$stepsim" search scenarios/job-hsdp-128xa100.yaml --top 1 --json --set job.checkpoint.every=young >"$tmp/tyoung.json"
python3 - "$tmp/t2h.json" "$tmp/tyoung.json" <<'PY' || fail "the job's checkpoint interval as the search's"
import json, sys
a, b = (json.load(open(x)) for x in sys.argv[1:])
assert round(a["around"]["days"], 1) == 56.0 and b["around"]["days"] < a["around"]["days"], (a["around"], b["around"])
PY
# ... and so is the step's own schedule where its blocking sends deadlock, found when it runs.
run "$stepsim" search scenarios/job-llama70b-64xh100.yaml --set job_step.layout.schedule=dualpipe-v \
  --set job_step.layout.virtual_stages=1 --set 'job_step.layout.overlap={pp: false}'
refused "error: --set: job_step.layout.overlap.pp: with blocking pipeline sends (overlap.pp false) schedule 'dualpipe-v' deadlocks"
# --set search.layout.KEY opens a key the step fixes (cp: 16.0 % faster than the step) or narrows
# an opened one; the step's own keys are set on the step.
"$stepsim" search scenarios/job-llama70b-64xh100.yaml --set 'search.layout.cp=[1,2,4]' --top 1 >"$tmp/around-cp.txt"
has "^around the job step's layout: tp, pp, virtual_stages, schedule, micro_batch, recompute, zero, sequence_parallel, cp searched, dp what the cards leave" "$tmp/around-cp.txt"
fig "^1 64 4 8 1 1 2 1 dualpipe 1 none yes 13.073 s" "$tmp/around-cp.txt"
has "^  182 layouts that fit rank before it (faster, or as fast in less memory); #1 is 16.0% faster (13.073 s)$" "$tmp/around-cp.txt"
"$stepsim" search scenarios/job-llama70b-64xh100.yaml --set search.layout.cp=auto --top 1 >"$tmp/around-cpauto.txt"
has "^  188 layouts that fit rank before it (faster, or as fast in less memory); #1 is 16.0% faster (13.073 s)$" "$tmp/around-cpauto.txt"
"$stepsim" search scenarios/job-llama70b-64xh100.yaml --set search.layout.tp=8 --set search.layout.schedule=interleaved-1f1b \
  >"$tmp/around-narrow.txt"
has "^around the job step's layout: pp, virtual_stages, micro_batch, recompute, zero, sequence_parallel searched" "$tmp/around-narrow.txt"
run "$stepsim" search scenarios/job-llama70b-64xh100.yaml --set search.layout.attention=unfused
refused "error: --set: search.layout.attention: searching around a job step, its own keys are set as \`run\` sets them: --set job_step.layout.attention=... (search.layout takes the searched keys: tp, pp, cp, ep, ...)"
run "$stepsim" search scenarios/search-design-desk.yaml --top 0
refused "error: search: --top: must be at least 1 (got 0)"
run "$stepsim" search scenarios/search-design-desk.yaml --top 1k
refused "error: search: --top: '1k' is not a whole number (a count's suffixes are K, M, B and T, in capitals)"
run "$stepsim" search scenarios/job-1024.yaml
refused "error: scenarios/job-1024.yaml:5: search: missing: a search section (model, hardware, layout with lists or auto), or a job_step to search around"
# The header names every global batch searched (it named the first alone).
"$stepsim" search scenarios/search-design-desk.yaml --set 'search.layout.global_batch=[384, 768]' >"$tmp/gb2.txt" 2>/dev/null
has "^qwen3-8b (36 layers, h 4096, seq 8192) on 16, 24, 32, 40, 48, 56, 64 x rtx4090; global batch 384, 768$" "$tmp/gb2.txt"
# A windowed model says so in the search's heading as in the step's (model_words).
"$stepsim" search scenarios/job-gemma3-27b-128k-64xh100.yaml --top 1 >"$tmp/gemma-search.txt"
has "^gemma3-27b (62 layers, 52 of them within a 1,024-token window, h 5376, seq 131072) on 64 x h100-sxm; global batch 32$" "$tmp/gemma-search.txt"
# The optimizer on the host searched (docs/search.md): under ZeRO 1-3 only, labelled "host", a CSV column.
"$stepsim" search scenarios/job-offload-8x4090.yaml --set search.layout.offload_optimizer=auto --set search.top=5 \
  --csv "$tmp/off.csv" --json >"$tmp/off.json"
"$stepsim" search scenarios/job-offload-8x4090.yaml --set search.layout.offload_optimizer=auto --set search.top=5 >"$tmp/off.txt"
fig "1 8 4 2 1 1 2 host dualpipe 1 none yes 256.371 s 48.9% 21.1" "$tmp/off.txt"
has "the job step's own layout, 8 cards: tp 1 pp 1 dp 8 fsdp (optimizer on the host), mbs 1, recompute full:" "$tmp/off.txt"
python3 - "$tmp/off.csv" "$tmp/off.json" <<'PY' || fail "offload_optimizer in the search's CSV and JSON"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows and all(r["offload_optimizer"] in ("0", "1") for r in rows)
assert all(r["offload_optimizer"] == "0" for r in rows if r["zero"] == "0"), "zero 0 has no shard to offload"
assert {r["offload_optimizer"] for r in rows if r["zero"] != "0"} == {"0", "1"}
top = json.load(open(sys.argv[2]))["top"]
assert all(t.get("offload_optimizer") is True for t in top), [t.get("offload_optimizer") for t in top]
PY
# A host too small for the shards prunes the layouts that offload (with those over memory).
run "$stepsim" search scenarios/job-offload-8x4090.yaml --set search.layout.offload_optimizer=true \
  --set job_step.hardware.node.host_memory=8GiB
[[ $code == 0 ]] || fail "search with a small host: exit $code"
has "1470 offload more optimizer state than a node's host memory holds (the least 122.1 GiB a node; 8.0 GiB)" "$tmp/out"
has "a host memory of at least 122.1 GiB a node (hardware.node.host_memory), or the optimizer on the GPUs" "$tmp/out"
echo "search cli: ok"
