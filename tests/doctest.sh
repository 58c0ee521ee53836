#!/usr/bin/env bash
# Executable documentation: every example in README.md and docs/*.md whose output is shown is run
# and compared with what is shown, so a changed output fails the build instead of drifting.
#
# An example is a ```text block whose first line is `$ stepsim ...` or `$ scripts/run.sh ...`;
# the lines after it (up to the next `$ ` command line or the closing ```) are the expected
# stdout. A ```console block is the same as a terminal shows it: stdout and stderr together.
# In the expected text a line that is exactly `...` stands for any number of lines (zero or
# more); nothing else is normalised, so shown figures must be the program's figures. Add `2>&1`
# to a text example's command to show stderr too. Commands run in a scratch directory holding
# `scenarios/`, `bench/` and `validation/` (links to the checkout's) and an `out/` emptied at the start of each
# block (so a block's later commands see what its earlier ones wrote), with `stepsim` on the PATH
# and `scripts/run.sh` meaning `stepsim` with its default arguments; files an example writes
# (out/report.html) land there, never in the checkout.
# Usage: bash tests/doctest.sh /path/to/stepsim [FILE.md...]   (from the source directory)
set -euo pipefail
stepsim="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
shift
src="$(pwd)"
if (($# == 0)); then
  set -- README.md docs/*.md
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/work/scripts"
ln -s "$stepsim" "$tmp/bin/stepsim"
ln -s "$src/scenarios" "$tmp/work/scenarios"
ln -s "$src/bench" "$tmp/work/bench"
ln -s "$src/validation" "$tmp/work/validation"
# scripts/run.sh sets up and builds first; here the binary is built, so it is only the default run.
cat >"$tmp/work/scripts/run.sh" <<'EOF'
#!/usr/bin/env bash
if (($# == 0)); then set -- compare scenarios/book-pipeline.yaml; fi
exec stepsim "$@"
EOF
chmod +x "$tmp/work/scripts/run.sh"

# Splits FILE into numbered examples: $tmp/ex/N.cmd (the command), N.expected, N.where (file:line).
extract() {
  awk -v dir="$tmp/ex" -v file="$1" -v start="$2" '
    function start_example(fresh) {
      n++; state = 2
      print substr($0, 3) (console ? " 2>&1" : "") > (dir "/" n ".cmd")
      printf "" > (dir "/" n ".expected")
      print file ":" NR > (dir "/" n ".where")
      if (fresh) printf "" > (dir "/" n ".fresh")
    }
    BEGIN { n = start; state = 0 }
    state == 0 && /^```(text|console)[[:space:]]*$/ { state = 1; console = ($0 ~ /console/); next }
    state == 1 {
      if ($0 ~ /^\$ (stepsim|scripts\/run\.sh)( |$)/) start_example(1)
      else if ($0 ~ /^```/) state = 0
      else state = 3
      next
    }
    state == 2 && /^```/ { state = 0; next }
    state == 2 && /^\$ (stepsim|scripts\/run\.sh)( |$)/ { start_example(0); next }
    state == 2 { print > (dir "/" n ".expected"); next }
    state == 0 && /^```/ { state = 3; next }
    state == 3 && /^```/ { state = 0; next }
    END { print n > (dir "/count") }
  ' "$src/$1"
}

# Exit 0 when ACTUAL matches EXPECTED, where an expected line `...` matches zero or more lines.
# Segments between `...` lines must appear in order; the first is anchored at the top unless the
# text starts with `...`, the last at the bottom unless it ends with `...`. Leftmost matching of
# each segment is enough for ordered segments separated by unbounded gaps.
matches() {
  awk '
    FNR == NR { want[++ne] = $0; next }
    { got[++na] = $0 }
    function seg_at(s, e, pos,   k) {
      for (k = s; k <= e; k++) if (pos + k - s > na || got[pos + k - s] != want[k]) return 0
      return 1
    }
    END {
      pos = 1; i = 1; floating = 0
      while (i <= ne) {
        if (want[i] == "...") { floating = 1; i++; continue }
        j = i; while (j <= ne && want[j] != "...") j++
        e = j - 1; len = e - i + 1
        last = (j > ne)
        if (!floating) {
          if (!seg_at(i, e, pos)) exit 1
        } else if (last) {
          if (na - len + 1 < pos || !seg_at(i, e, na - len + 1)) exit 1
          pos = na - len + 1
        } else {
          found = 0
          for (p = pos; p + len - 1 <= na; p++) if (seg_at(i, e, p)) { found = 1; break }
          if (!found) exit 1
          pos = p
        }
        pos += len; i = j; floating = 0
      }
      if (!floating && pos != na + 1) exit 1
      exit 0
    }
  ' "$1" "$2"
}

# The matcher itself, so that the runner cannot pass by matching anything.
selftest() {  # expected actual 0|1
  printf '%b' "$1" >"$tmp/st.expected"
  printf '%b' "$2" >"$tmp/st.actual"
  local got=0
  matches "$tmp/st.expected" "$tmp/st.actual" || got=1
  [[ $got == "$3" ]] || { echo "FAIL: doctest matcher: shown '$1' vs printed '$2' gave $got, want $3" >&2; exit 1; }
}
selftest 'a\nb\n' 'a\nb\n' 0
selftest 'a\nb\n' 'a\nc\n' 1
selftest 'a\n' 'a\nb\n' 1            # extra output is drift too
selftest 'a\n...\nc\n' 'a\nb\nb\nc\n' 0
selftest 'a\n...\nc\n' 'a\nb\n' 1
selftest '...\nc\n' 'a\nc\n' 0
selftest 'a\n...\n' 'a\nb\n' 0
selftest '...\nb\n...\n' 'a\nc\n' 1
selftest 'a\n...\nc\n...\ne\n' 'a\nc\nd\ne\n' 0

mkdir -p "$tmp/ex"
n=0
for file in "$@"; do
  [[ -f "$src/$file" ]] || continue
  extract "$file" "$n"
  n="$(cat "$tmp/ex/count")"
done
[[ $n -gt 0 ]] || { echo "FAIL: no examples with shown output found" >&2; exit 1; }

failed=0
for ((i = 1; i <= n; i++)); do
  cmd="$(cat "$tmp/ex/$i.cmd")"
  if [[ -f "$tmp/ex/$i.fresh" ]]; then rm -rf "$tmp/work/out" && mkdir "$tmp/work/out"; fi
  (cd "$tmp/work" && PATH="$tmp/bin:$PATH" COLUMNS=100 bash -c "$cmd" </dev/null \
    >"$tmp/ex/$i.actual" 2>"$tmp/ex/$i.stderr") || true
  if ! matches "$tmp/ex/$i.expected" "$tmp/ex/$i.actual"; then
    echo "FAIL: $(cat "$tmp/ex/$i.where"): \$ $cmd" >&2
    echo "  shown (-) vs printed (+):" >&2
    diff -u "$tmp/ex/$i.expected" "$tmp/ex/$i.actual" | tail -n +3 | head -40 >&2 || true
    failed=$((failed + 1))
  fi
done
[[ $failed == 0 ]] || { echo "doctest: $failed of $n examples differ from what the docs show" >&2; exit 1; }
echo "doctest: $n examples print what the docs show"
