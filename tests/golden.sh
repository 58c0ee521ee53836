#!/usr/bin/env bash
# Byte-identity of every shipped scenario: runs each case of tests/golden/cases.txt and compares
# stdout (and any trace file it writes) with the stored output under tests/golden/. The stored
# outputs were made by the build before the speed work (see tests/golden/README.md), so any
# change of a figure, a table or a trace byte fails here with a diff.
# Usage: bash tests/golden.sh /path/to/stepsim [--update]   (from the source directory)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
update="${2:-}"
dir=tests/golden
failed=0 count=0
while IFS='|' read -r name args; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  count=$((count + 1))
  # A case may write a trace: TRACE in its arguments becomes a temporary file.
  trace="$tmp/$name.trace.json"
  read -r -a argv <<<"${args//TRACE/$trace}"
  set +e
  "$stepsim" "${argv[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err"
  rc=$?
  set -e
  echo "exit $rc" >>"$tmp/$name.out"
  if [[ "$update" == "--update" ]]; then
    cp "$tmp/$name.out" "$dir/$name.out"
    [[ -f "$trace" ]] && gzip -9n <"$trace" >"$dir/$name.trace.json.gz"
    continue
  fi
  if ! cmp -s "$tmp/$name.out" "$dir/$name.out"; then
    echo "FAIL: $name ($args): output differs" >&2
    diff "$dir/$name.out" "$tmp/$name.out" | head -20 >&2 || true
    failed=$((failed + 1))
  fi
  if [[ -f "$dir/$name.trace.json.gz" ]]; then
    if [[ ! -f "$trace" ]] || ! gzip -dc "$dir/$name.trace.json.gz" | cmp -s - "$trace"; then
      echo "FAIL: $name ($args): trace differs" >&2
      failed=$((failed + 1))
    fi
  fi
done <"$dir/cases.txt"
[[ "$update" == "--update" ]] && { echo "golden: $count cases written"; exit 0; }
[[ $count -gt 0 ]] || { echo "FAIL: no cases" >&2; exit 1; }
[[ $failed == 0 ]] || { echo "golden: $failed of $count cases differ" >&2; exit 1; }
echo "golden: $count cases byte-identical"
