#!/usr/bin/env bash
# Every relative link in README.md and docs/*.md resolves: the file it names exists in the
# checkout, and a `#fragment` names a heading of that file by GitHub's rule (lower case, spaces to
# hyphens, punctuation but `-` and `_` dropped, a repeated heading's slug suffixed -1, -2, ...).
# Links to the web are not followed. Prints each broken link as FILE:LINE: [text](target): why.
# The checker is tried first on a scratch page whose broken links it must find.
# Usage: bash tests/doc_links.sh [ignored]   (from the source directory)
set -euo pipefail
check() {
  python3 - "$@" <<'EOF'
import os, re, sys

def slugs(path):
    seen, out, fence = {}, set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
            continue
        m = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = re.sub(r"[^\w\- ]", "", m.group(2).strip().lower()).replace(" ", "-")
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out

link = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
cache, bad, checked = {}, 0, 0
for doc in sys.argv[1:]:
    fence = False
    for no, line in enumerate(open(doc, encoding="utf-8"), 1):
        if line.startswith("```"):
            fence = not fence
        if fence:
            continue
        for text, target in link.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z]+:", target):
                continue
            checked += 1
            path, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            why = None
            if not os.path.exists(dest):
                why = f"no file {dest}"
            elif frag:
                if not dest.endswith(".md"):
                    why = f"a fragment into {dest}, not a Markdown file"
                else:
                    if dest not in cache:
                        cache[dest] = slugs(dest)
                    if frag not in cache[dest]:
                        why = f"no heading '#{frag}' in {dest}"
            if why:
                bad += 1
                print(f"{doc}:{no}: [{text}]({target}): {why}")
print(f"doc_links: {checked} relative links checked, {bad} broken", file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
# The checker itself first: a scratch page with good links (a heading with punctuation, a repeated
# heading's second slug), a missing file and a missing heading gives exactly the two broken ones.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/docs"
printf '# Top\n\n## A `b`: c (d)\n\n## Same\n\n## Same\n\n[ok](#a-b-c-d) [two](#same-1) [gone](nofile.md) [nohead](#nope)\n' \
  >"$tmp/docs/x.md"
if out="$(cd "$tmp" && check docs/x.md 2>/dev/null)"; then
  echo "doc_links: the checker passed a page with two broken links" >&2
  exit 1
fi
[[ "$(grep -c . <<<"$out")" == 2 && "$out" == *"[gone](nofile.md): no file docs/nofile.md"* &&
  "$out" == *"[nohead](#nope): no heading '#nope' in docs/x.md"* ]] || {
  echo "doc_links: the checker's self-test printed: $out" >&2
  exit 1
}
check README.md docs/*.md
