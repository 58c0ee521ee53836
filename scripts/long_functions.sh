#!/usr/bin/env bash
# Lists C++ functions longer than a limit (default 80 lines, from the first line of the signature
# to the closing brace) in the given folders; exits 1 if there is any. A brace-counting scanner,
# not a parser: comments, strings, character and raw string literals are skipped; a `{` outside
# any function body opens one when the text before it (back to the last `;`, `{` or `}`) ends in
# `)` plus qualifiers (a function, a constructor's initializer list, a lambda at namespace scope).
# Nested lambdas and local classes count towards their enclosing function.
#
# Usage: scripts/long_functions.sh [--max N] [--exclude PATH]... [DIR|FILE]...
#   default folders: sim schedules models cli (from the repository root)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
max=80
excludes=()
dirs=()
while (($#)); do
  case "$1" in
    --max) max="$2"; shift 2 ;;
    --exclude) excludes+=("$2"); shift 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
((${#dirs[@]})) || dirs=(sim schedules models cli)

files=()
while IFS= read -r f; do
  skip=0
  for e in "${excludes[@]+"${excludes[@]}"}"; do
    [[ "$f" == "$e" || "$f" == "$e"/* ]] && skip=1
  done
  ((skip)) || files+=("$f")
done < <(find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' \) | LC_ALL=C sort)
((${#files[@]})) || { echo "long_functions: no files" >&2; exit 0; }

awk -v max="$max" '
function reset_file() { st = "code"; depth = 0; fdepth = -1; pend = ""; pend_line = 0 }
FNR == 1 { reset_file() }
function header(text,   t) {
  t = text
  gsub(/[ \t]+/, " ", t)
  sub(/^ /, "", t); sub(/ $/, "", t)
  # trailing qualifiers: const, noexcept, override, final, -> return type, mutable
  while (match(t, /( (const|noexcept|override|final|mutable))$/)) t = substr(t, 1, RSTART - 1)
  sub(/ ->[^()]*$/, "", t)
  return t ~ /\)$/ && t !~ /^(namespace|struct|class|enum|union)( |$)/
}
function name_of(text,   t) {
  t = text; gsub(/[ \t]+/, " ", t); sub(/^ /, "", t)
  if (match(t, /[A-Za-z_~][A-Za-z0-9_:<>~]*(operator[^(]*)? ?\(/)) return substr(t, RSTART, RLENGTH - 1)
  return substr(t, 1, 60)
}
{
  line = $0; n = length(line); i = 1
  if (st == "line") st = "code"
  while (i <= n) {
    c = substr(line, i, 1); c2 = substr(line, i, 2)
    if (st == "block") { if (c2 == "*/") { st = "code"; i += 2 } else i++; continue }
    if (st == "str") { if (c == "\\") i += 2; else { if (c == "\"") st = "code"; i++ } ; continue }
    if (st == "chr") { if (c == "\\") i += 2; else { if (c == "\x27") st = "code"; i++ } ; continue }
    if (st == "raw") { if (c2 == ")\"") { st = "code"; i += 2 } else i++; continue }
    # code
    if (c2 == "//") break
    if (c2 == "/*") { st = "block"; i += 2; continue }
    if (c2 == "R\"" && substr(line, i + 2, 1) == "(" && (i == 1 || substr(line, i - 1, 1) !~ /[A-Za-z0-9_]/)) {
      st = "raw"; i += 3; continue
    }
    if (c == "\"") { st = "str"; i++; continue }
    if (c == "\x27") {
      if (i > 1 && substr(line, i - 1, 1) ~ /[0-9A-Fa-f]/) { i++; continue }  # digit separator
      st = "chr"; i++; continue
    }
    if (c == "{") {
      if (fdepth < 0 && header(pend)) { fdepth = depth; fstart = pend_line; fname = name_of(pend) }
      depth++; pend = ""; pend_line = 0; i++; continue
    }
    if (c == "}") {
      depth--
      if (depth == fdepth) {
        len = FNR - fstart + 1
        if (len > max) { printf "%s:%d: %s: %d lines\n", FILENAME, fstart, fname, len; found++ }
        fdepth = -1
      }
      pend = ""; pend_line = 0; i++; continue
    }
    if (c == ";") { pend = ""; pend_line = 0; i++; continue }
    if (c == "#" && pend == "" && substr(line, 1, i - 1) ~ /^[ \t]*$/) break  # preprocessor line
    if (pend_line == 0 && c !~ /[ \t]/) pend_line = FNR
    pend = pend c; i++
  }
  pend = pend " "
}
END {
  if (found) { printf "%d function(s) over %d lines\n", found, max; exit 1 }
}
' "${files[@]}"
