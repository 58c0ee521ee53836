# The preamble shared by the CLI test scripts (tests/*.sh), sourced after their `set` line:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/cli_test.sh"
# It provides
#   $stepsim      the binary under test (the script's first argument);
#   $tmp          a scratch folder, removed when the script exits;
#   fail MESSAGE  print "FAIL: MESSAGE" on stderr and exit 1;
#   run CMD...    run CMD with stdout and stderr to files; sets $code (its exit status), $out and
#                 $err (their text). A failing CMD does not stop a script under `set -e`;
#   refused TEXT  after `run`: fail unless it exited 2 with TEXT in its message (bad input);
#   csv_refused CSV SED TEXT   `check-against` on CSV edited by the sed script SED (written to
#                 $tmp/edited.csv): refused with TEXT, which names edited.csv;
#   has TEXT FILE, fig TEXT FILE   FILE holds TEXT (fig: with runs of spaces squeezed, as tables
#                 align with them);
#   layout_key FILE KEY VALUE   a run's JSON `layout` has KEY = VALUE (JSON text), or, with VALUE
#                 "absent", has no KEY.
# It lives in tests/lib/ so that CMake's glob of tests/*.sh does not register it as a test.
stepsim="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {
  code=0
  "$@" >"$tmp/out" 2>"$tmp/err" || code=$?
  out="$(cat "$tmp/out")"
  err="$(cat "$tmp/err")"
}
refused() { [[ $code == 2 && "$err" == *"$1"* ]] || fail "expected exit 2 with '$1'; got exit $code: $err"; }
csv_refused() {
  sed "$2" "$1" >"$tmp/edited.csv"
  run "$stepsim" check-against "$tmp/edited.csv"
  refused "$3"
}
has() { grep -q -- "$1" "$2" || { cat "$2"; fail "expected '$1' in $2"; }; }
# (grep reads all its input: with pipefail, `grep -q` leaving early could fail the pipeline on
# tr's SIGPIPE though the line is there.)
fig() { tr -s ' ' <"$2" | grep -- "$1" >/dev/null || { cat "$2"; fail "expected '$1' in $2"; }; }
layout_key() {
  python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["layout"]; k,v=sys.argv[2],sys.argv[3]
assert (k not in l) if v == "absent" else (k in l and l[k] == json.loads(v)), (k, l.get(k))' "$1" "$2" "$3" ||
    fail "layout.$2 in $1: expected $3"
}
