#!/usr/bin/env bash
# Browser test of the HTML report: headless Chromium (Debian's `chromium`, installed by
# scripts/setup.sh) opens the book's comparison (`compare scenarios/book-pipeline.yaml
# --schedules fill-drain,1f1b,zb-h1 --html`), and
#  1. the page's script ran without a JavaScript error (its window.onerror hook writes errors
#     into <pre id="errors">, read back from the DOM dump), found one SVG bar per op, and
#     hovering a bar shows its op, micro-batch, start and end;
#  2. a 1400x1000 screenshot is not blank: Chromium itself decodes the PNG on a canvas and
#     counts its distinct colours and the pixels in the forward-op colour.
#  3. the planner's and the job simulation's reports (`plan --html`, `plan --sweep ... --html`,
#     `job --html`) likewise run their script without an error and make screenshots that are not
#     blank: many colours and enough pixels in each page's main colour (bars, cells, bins).
# Without chromium this test fails: setup.sh installs it, so a missing browser is a broken setup.
# Usage: bash tests/html_browser.sh path/to/stepsim   (from the source directory)
set -euo pipefail
stepsim="${1:?usage: html_browser.sh path/to/stepsim}"

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

browser="$(command -v chromium || command -v chromium-browser || true)"
[[ -n "$browser" ]] || fail "chromium is not installed (scripts/setup.sh installs it: apt-get install chromium)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

chrome() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$tmp/profile" "$@" 2>>"$tmp/chromium.log"
}

"$stepsim" compare scenarios/book-pipeline.yaml --schedules fill-drain,1f1b,zb-h1 --html "$tmp/report.html" >/dev/null
bars="$(grep -o '<rect class="bar"' "$tmp/report.html" | wc -l)"
# fill-drain and 1F1B: 4 x (8 F + 8 B + update) + 48 messages each; ZB-H1: 32 W more.
[[ "$bars" -eq 380 ]] || fail "expected 380 bars in the report, found $bars"

# 1. Scripts ran, no errors, every bar parsed as an SVG rect, and hovering a bar shows its tip:
# a probe appended to the page moves the pointer over the first bar (fill-drain's 0F0) and
# records the tooltip.
probe='<script>(function(){var b=document.querySelector("rect.bar");'
probe+='b.dispatchEvent(new MouseEvent("mouseover",{bubbles:true,clientX:200,clientY:200}));'
probe+='var t=document.getElementById("tip"),p=document.createElement("pre");p.id="hover";'
probe+='p.textContent=t.style.display+": "+t.textContent.replace(/\\n/g," / ");document.body.appendChild(p);})();</script>'
sed "s#</body>#${probe}</body>#" "$tmp/report.html" >"$tmp/probe.html"
chrome --virtual-time-budget=5000 --dump-dom "file://$tmp/probe.html" >"$tmp/dom.html" ||
  fail "chromium --dump-dom failed: $(tail -5 "$tmp/chromium.log")"
grep -q '<pre id="errors"></pre>' "$tmp/dom.html" ||
  fail "the page raised JavaScript errors: $(grep -A5 '<pre id="errors">' "$tmp/dom.html" | sed '/<\/pre>/q')"
grep -q 'data-ready="1"' "$tmp/dom.html" || fail "the page's script did not finish (no data-ready on <body>)"
grep -q "data-bars=\"$bars\"" "$tmp/dom.html" ||
  fail "the browser found $(grep -o 'data-bars="[0-9]*"' "$tmp/dom.html") bars, the file has $bars"
hover="$(sed -n 's/.*<pre id="hover">\([^<]*\)<.*/\1/p' "$tmp/dom.html")"
[[ "$hover" == "block: 0F0: forward of micro-batch 0, stage 0 / start 0.000 ms, end 10.000 ms (10.000 ms)" ]] ||
  fail "hovering the first bar showed '$hover'"

# 2. A screenshot that is not blank.
chrome --screenshot="$tmp/shot.png" --window-size=1400,1000 "file://$tmp/report.html" >/dev/null ||
  fail "chromium --screenshot failed: $(tail -5 "$tmp/chromium.log")"
[[ -s "$tmp/shot.png" ]] || fail "no screenshot written"
# "size WxH colours N match M" of a PNG: Chromium itself decodes it on a canvas and counts its
# distinct colours and the pixels near the colour RRGGBB (hex). The PNG goes in as a data: URL,
# so the canvas may read its pixels.
png_check() {
  local png="$1" rgb="$2"
  {
    echo '<!DOCTYPE html><html><body><pre id="result">pending</pre><script>'
    echo "var want = [0x${rgb:0:2}, 0x${rgb:2:2}, 0x${rgb:4:2}];"
    echo 'var img = new Image();'
    echo 'img.onload = function () {'
    echo '  var c = document.createElement("canvas"); c.width = img.width; c.height = img.height;'
    echo '  var g = c.getContext("2d"); g.drawImage(img, 0, 0);'
    echo '  var d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set(), match = 0;'
    echo '  for (var i = 0; i < d.length; i += 4) {'
    echo '    seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);'
    echo '    if (Math.abs(d[i] - want[0]) + Math.abs(d[i + 1] - want[1]) + Math.abs(d[i + 2] - want[2]) < 12) match++;'
    echo '  }'
    echo '  document.getElementById("result").textContent ='
    echo '    "size " + img.width + "x" + img.height + " colours " + seen.size + " match " + match;'
    echo '};'
    echo 'img.onerror = function () { document.getElementById("result").textContent = "unreadable"; };'
    printf 'img.src = "data:image/png;base64,%s";\n' "$(base64 -w0 "$png")"
    echo '</script></body></html>'
  } >"$tmp/check.html"
  chrome --virtual-time-budget=5000 --dump-dom "file://$tmp/check.html" >"$tmp/check_dom.html" ||
    fail "chromium could not run the PNG check"
  sed -n 's/.*<pre id="result">\([^<]*\)<.*/\1/p' "$tmp/check_dom.html"
}

result="$(png_check "$tmp/shot.png" 4e79a7)"
echo "screenshot: $result"
[[ "$result" =~ ^size\ 1400x1000\ colours\ ([0-9]+)\ match\ ([0-9]+)$ ]] || fail "PNG check gave '$result'"
colours="${BASH_REMATCH[1]}"
forward="${BASH_REMATCH[2]}"
((colours >= 50)) || fail "the screenshot looks blank: $colours distinct colours"
# 1400x1000 shows the summary and the fill-drain and 1F1B timelines: 64 forward bars of about
# 30 x 22 px. Ask for a fraction of that, so small layout changes do not break the test.
((forward >= 10000)) || fail "the screenshot shows too few forward-op pixels ($forward)"
echo "ok: no JavaScript errors, $bars bars, hover shows \"$hover\", screenshot with $colours colours"

# 3. The planner's and the job's reports. check_page NAME RRGGBB MIN_PIXELS: no JavaScript error,
# the script finished, and a 1200x900 screenshot with at least 30 colours and MIN_PIXELS pixels
# of the page's main colour.
check_page() {
  local name="$1" rgb="$2" min="$3" page="$tmp/$1.html"
  chrome --virtual-time-budget=5000 --dump-dom "file://$page" >"$tmp/$name.dom" ||
    fail "$name: chromium --dump-dom failed: $(tail -5 "$tmp/chromium.log")"
  grep -q '<pre id="errors"></pre>' "$tmp/$name.dom" ||
    fail "$name: the page raised JavaScript errors: $(grep -A5 '<pre id="errors">' "$tmp/$name.dom" | sed '/<\/pre>/q')"
  grep -q 'data-ready="1"' "$tmp/$name.dom" || fail "$name: the page's script did not finish"
  chrome --virtual-time-budget=3000 --screenshot="$tmp/$name.png" --window-size=1200,900 "file://$page" >/dev/null ||
    fail "$name: chromium --screenshot failed: $(tail -5 "$tmp/chromium.log")"
  local r
  r="$(png_check "$tmp/$name.png" "$rgb")"
  [[ "$r" =~ ^size\ 1200x900\ colours\ ([0-9]+)\ match\ ([0-9]+)$ ]] || fail "$name: PNG check gave '$r'"
  ((BASH_REMATCH[1] >= 30)) || fail "$name: the screenshot looks blank: $r"
  ((BASH_REMATCH[2] >= min)) || fail "$name: too few pixels of #$rgb in the screenshot: $r"
  echo "ok: $name: no JavaScript errors, screenshot $r"
}

"$stepsim" plan scenarios/design-case.yaml --html "$tmp/plan.html" >/dev/null
"$stepsim" plan scenarios/design-case.yaml --sweep cards=16:64:8 --sweep efficiency=0.3:0.5:0.05 --html "$tmp/sweep.html" >/dev/null
"$stepsim" job scenarios/job-1024.yaml --runs 200 --html "$tmp/job.html" >/dev/null 2>&1
# The design case's memory bars (the 10 GiB allowance in teal, ~64 x 130 px each) and its
# training bars; the sweep's green cells (18 of ~30 x 22 px); the job's histogram bins and
# overhead bars in blue. A fraction of each, so that small layout changes do not break the test.
check_page plan 76b7b2 5000
check_page sweep 59a14f 5000
check_page job 4e79a7 5000
