#!/usr/bin/env bash
# Every relative link in README.md and docs/*.md resolves: the file it names exists in the
# checkout, and a `#fragment` names a heading of that file by GitHub's rule (lower case, spaces to
# hyphens, punctuation but `-` and `_` dropped, a repeated heading's slug suffixed -1, -2, ...).
# Links to the web are not followed. Prints each broken link as FILE:LINE: [text](target): why.
# Usage: bash tests/doc_links.sh [ignored]   (from the source directory)
set -euo pipefail
python3 - README.md docs/*.md <<'EOF'
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
