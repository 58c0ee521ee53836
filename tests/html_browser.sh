#!/usr/bin/env bash
# Browser test of the HTML report: headless Chromium (Debian's `chromium`, installed by
# scripts/setup.sh) opens the book's comparison (`compare scenarios/book-pipeline.yaml
# --schedules fill-drain,1f1b,zb-h1 --html`), and
#  1. the page's script ran without a JavaScript error (its window.onerror hook writes errors
#     into <pre id="errors">, read back from the DOM dump), found one SVG bar per op, and
#     hovering a bar shows its op, micro-batch, start and end;
#  2. a 1400x1000 screenshot is not blank: Chromium itself decodes the PNG on a canvas and
#     counts its distinct colours and the pixels in the forward-op colour.
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
# The PNG goes in as a data: URL, so the canvas may read its pixels.
{
  echo '<!DOCTYPE html><html><body><pre id="result">pending</pre><script>'
  echo 'var img = new Image();'
  echo 'img.onload = function () {'
  echo '  var c = document.createElement("canvas"); c.width = img.width; c.height = img.height;'
  echo '  var g = c.getContext("2d"); g.drawImage(img, 0, 0);'
  echo '  var d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set(), forward = 0;'
  echo '  for (var i = 0; i < d.length; i += 4) {'
  echo '    seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);'
  echo '    if (Math.abs(d[i] - 0x4e) + Math.abs(d[i + 1] - 0x79) + Math.abs(d[i + 2] - 0xa7) < 12) forward++;'
  echo '  }'
  echo '  document.getElementById("result").textContent ='
  echo '    "size " + img.width + "x" + img.height + " colours " + seen.size + " forward " + forward;'
  echo '};'
  echo 'img.onerror = function () { document.getElementById("result").textContent = "unreadable"; };'
  printf 'img.src = "data:image/png;base64,%s";\n' "$(base64 -w0 "$tmp/shot.png")"
  echo '</script></body></html>'
} >"$tmp/check.html"
chrome --virtual-time-budget=5000 --dump-dom "file://$tmp/check.html" >"$tmp/check_dom.html" ||
  fail "chromium could not run the PNG check"
result="$(sed -n 's/.*<pre id="result">\([^<]*\)<.*/\1/p' "$tmp/check_dom.html")"
echo "screenshot: $result"
[[ "$result" =~ ^size\ 1400x1000\ colours\ ([0-9]+)\ forward\ ([0-9]+)$ ]] || fail "PNG check gave '$result'"
colours="${BASH_REMATCH[1]}"
forward="${BASH_REMATCH[2]}"
((colours >= 50)) || fail "the screenshot looks blank: $colours distinct colours"
# 1400x1000 shows the summary and the fill-drain and 1F1B timelines: 64 forward bars of about
# 30 x 22 px. Ask for a fraction of that, so small layout changes do not break the test.
((forward >= 10000)) || fail "the screenshot shows too few forward-op pixels ($forward)"
echo "ok: no JavaScript errors, $bars bars, hover shows \"$hover\", screenshot with $colours colours"
