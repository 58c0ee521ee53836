#!/usr/bin/env bash
# Browser test of the HTML reports: headless Chromium (Debian's `chromium`, installed by
# scripts/setup.sh) opens the book's comparison (`compare scenarios/book-pipeline.yaml
# --schedules fill-drain,1f1b,zb-h1 --html`) and the data-parallel comparison of
# `scenarios/dp-buckets.yaml`, and for each
#  1. the page's script ran without a JavaScript error (its window.onerror hook writes errors
#     into <pre id="errors">, read back from the DOM dump), found one SVG bar per op, and
#     hovering a bar (pipeline) or an exposed-communication interval (data-parallel) shows its
#     hover text;
#  2. a screenshot is not blank: Chromium itself decodes the PNG on a canvas and counts its
#     distinct colours and the pixels in one colour (forward ops; exposed communication).
# The design case's report (zero3-design-48.yaml, ~1,500 bars and zoomed views) must load
# without a JavaScript error too.
# The rl and moe reports (run --html) load without a JavaScript error, every bar found.
# The planner's and the job simulation's reports (`plan --html`, `plan --sweep ... --html`,
# `job --html`) likewise: no JavaScript error, hovering a column or cell shows its text, and the
# screenshots are not blank.
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

# Opens $1 with a probe appended that moves the pointer over the first element matching the CSS
# selector $2 and records the tooltip; checks there was no JavaScript error, that the script
# found every bar of the file, and prints what the tooltip showed.
hover_check() {
  local page="$1" selector="$2" bars
  bars="$(grep -o '<rect class="bar"' "$page" | wc -l)"
  local probe='<script>(function(){var b=document.querySelector("'"$selector"'");'
  probe+='b.dispatchEvent(new MouseEvent("mouseover",{bubbles:true,clientX:200,clientY:200}));'
  probe+='var t=document.getElementById("tip"),p=document.createElement("pre");p.id="hover";'
  probe+='p.textContent=t.style.display+": "+t.textContent.replace(/\\n/g," / ");document.body.appendChild(p);})();</script>'
  sed "s#</body>#${probe}</body>#" "$page" >"$tmp/probe.html"
  chrome --virtual-time-budget=5000 --dump-dom "file://$tmp/probe.html" >"$tmp/dom.html" ||
    fail "chromium --dump-dom failed on $page: $(tail -5 "$tmp/chromium.log")"
  grep -q '<pre id="errors"></pre>' "$tmp/dom.html" ||
    fail "$page raised JavaScript errors: $(grep -A5 '<pre id="errors">' "$tmp/dom.html" | sed '/<\/pre>/q')"
  grep -q 'data-ready="1"' "$tmp/dom.html" || fail "the script of $page did not finish (no data-ready on <body>)"
  grep -q "data-bars=\"$bars\"" "$tmp/dom.html" ||
    fail "the browser found $(grep -o 'data-bars="[0-9]*"' "$tmp/dom.html") bars in $page, the file has $bars"
  sed -n 's/.*<pre id="hover">\([^<]*\)<.*/\1/p' "$tmp/dom.html"
}

# Screenshots $1 at $2 (WxH) and prints "colours N pixels M": distinct colours, and pixels within
# a small distance of the colour $3 (rrggbb).
screenshot_check() {
  local page="$1" size="$2" colour="$3"
  rm -f "$tmp/shot.png"
  chrome --virtual-time-budget=3000 --screenshot="$tmp/shot.png" --window-size="$size" "file://$page" >/dev/null ||
    fail "chromium --screenshot failed: $(tail -5 "$tmp/chromium.log")"
  [[ -s "$tmp/shot.png" ]] || fail "no screenshot written"
  # The PNG goes in as a data: URL, so the canvas may read its pixels.
  {
    echo '<!DOCTYPE html><html><body><pre id="result">pending</pre><script>'
    echo "var want = [0x${colour:0:2}, 0x${colour:2:2}, 0x${colour:4:2}], img = new Image();"
    echo 'img.onload = function () {'
    echo '  var c = document.createElement("canvas"); c.width = img.width; c.height = img.height;'
    echo '  var g = c.getContext("2d"); g.drawImage(img, 0, 0);'
    echo '  var d = g.getImageData(0, 0, c.width, c.height).data, seen = new Set(), hits = 0;'
    echo '  for (var i = 0; i < d.length; i += 4) {'
    echo '    seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);'
    echo '    if (Math.abs(d[i] - want[0]) + Math.abs(d[i + 1] - want[1]) + Math.abs(d[i + 2] - want[2]) < 12) hits++;'
    echo '  }'
    echo '  document.getElementById("result").textContent ='
    echo '    "size " + img.width + "x" + img.height + " colours " + seen.size + " pixels " + hits;'
    echo '};'
    echo 'img.onerror = function () { document.getElementById("result").textContent = "unreadable"; };'
    printf 'img.src = "data:image/png;base64,%s";\n' "$(base64 -w0 "$tmp/shot.png")"
    echo '</script></body></html>'
  } >"$tmp/check.html"
  chrome --virtual-time-budget=5000 --dump-dom "file://$tmp/check.html" >"$tmp/check_dom.html" ||
    fail "chromium could not run the PNG check"
  local result
  result="$(sed -n 's/.*<pre id="result">\([^<]*\)<.*/\1/p' "$tmp/check_dom.html")"
  [[ "$result" =~ ^size\ ${size/,/x}\ colours\ ([0-9]+)\ pixels\ ([0-9]+)$ ]] || fail "PNG check of $page gave '$result'"
  echo "colours ${BASH_REMATCH[1]} pixels ${BASH_REMATCH[2]}"
}

# --- the book's pipeline comparison
"$stepsim" compare scenarios/book-pipeline.yaml --schedules fill-drain,1f1b,zb-h1 --html "$tmp/report.html" >/dev/null
bars="$(grep -o '<rect class="bar"' "$tmp/report.html" | wc -l)"
# fill-drain and 1F1B: 4 x (8 F + 8 B + update) + 48 messages each; ZB-H1: 32 W more.
[[ "$bars" -eq 380 ]] || fail "expected 380 bars in the report, found $bars"
# Hovering the first bar (fill-drain's 0F0) shows its tooltip.
hover="$(hover_check "$tmp/report.html" rect.bar)"
[[ "$hover" == "block: 0F0: forward of micro-batch 0, stage 0 / start 0.000 ms, end 10.000 ms (10.000 ms)" ]] ||
  fail "hovering the first bar showed '$hover'"
shot="$(screenshot_check "$tmp/report.html" 1400,1000 4e79a7)"
echo "pipeline screenshot: $shot"
[[ "$shot" =~ ^colours\ ([0-9]+)\ pixels\ ([0-9]+)$ ]] || fail "PNG check gave '$shot'"
((BASH_REMATCH[1] >= 50)) || fail "the screenshot looks blank: ${BASH_REMATCH[1]} distinct colours"
# 1400x1000 shows the summary and the fill-drain and 1F1B timelines: 64 forward bars of about
# 30 x 22 px. Ask for a fraction of that, so small layout changes do not break the test.
((BASH_REMATCH[2] >= 10000)) || fail "the screenshot shows too few forward-op pixels (${BASH_REMATCH[2]})"
echo "ok: pipeline report: no JavaScript errors, $bars bars, hover shows \"$hover\""

# --- the data-parallel comparison: base, three buckets, one bucket
"$stepsim" compare scenarios/dp-buckets.yaml --html "$tmp/dp.html" >/dev/null
dp_bars="$(grep -o '<rect class="bar"' "$tmp/dp.html" | wc -l)"
# base: 4 forward + 4 backward + 3 AllReduce; one-bucket: 4 + 4 + 1. three-buckets is the base
# again, named but not drawn twice.
[[ "$dp_bars" -eq 20 ]] || fail "expected 20 bars in the data-parallel report, found $dp_bars"
grep -q 'The same step as base' "$tmp/dp.html" || fail "the data-parallel report does not say three-buckets is the base"
# The one exposed interval: one-bucket's compute waiting 2.55 ms for its AllReduce.
hover="$(hover_check "$tmp/dp.html" rect.wait)"
[[ "$hover" == "block: card 0: exposed communication 2.550 ms, from 8.000 to 10.550 ms / "* ]] ||
  fail "hovering the exposed interval showed '$hover'"
shot="$(screenshot_check "$tmp/dp.html" 1400,1300 ff9896)"
echo "data-parallel screenshot: $shot"
[[ "$shot" =~ ^colours\ ([0-9]+)\ pixels\ ([0-9]+)$ ]] || fail "PNG check gave '$shot'"
((BASH_REMATCH[1] >= 50)) || fail "the data-parallel screenshot looks blank: ${BASH_REMATCH[1]} distinct colours"
# The exposed interval: 2.55 of 10.55 ms on a 1,160 px axis, 22 px high: about 6,000 px (legend
# swatches add a few). Ask for half.
((BASH_REMATCH[2] >= 3000)) || fail "the screenshot shows too few exposed-communication pixels (${BASH_REMATCH[2]})"
echo "ok: data-parallel report: no JavaScript errors, $dp_bars bars, hover shows \"$hover\""

# --- the design case: a big page (every op a bar, zoomed views) still loads cleanly
"$stepsim" run scenarios/zero3-design-48.yaml --html "$tmp/design.html" >/dev/null
hover="$(hover_check "$tmp/design.html" rect.wait)"
[[ "$hover" == "block: card 0: exposed communication "* ]] || fail "hovering the design case's first exposed interval showed '$hover'"
echo "ok: design case report: no JavaScript errors, $(grep -o '<rect class="bar"' "$tmp/design.html" | wc -l) bars"

# --- rl and moe pages (drawn by the scenario-kind registry from their timelines): no JavaScript
# error, every bar found, the first bar's hover text.
"$stepsim" run scenarios/moe-two-experts.yaml --html "$tmp/moe.html" >/dev/null
# 2 cards x (1 expert + dispatch + combine).
[[ "$(grep -o '<rect class="bar"' "$tmp/moe.html" | wc -l)" -eq 6 ]] || fail "expected 6 bars in the moe report"
hover="$(hover_check "$tmp/moe.html" rect.bar)"
[[ "$hover" == "block: card 0: expert 0, 96 rows computed (96 routed), 0 s to 960 us (960 us)" ]] ||
  fail "hovering the moe report's first bar showed '$hover'"
"$stepsim" run scenarios/rl-sync-async.yaml --html "$tmp/rl.html" >/dev/null
hover="$(hover_check "$tmp/rl.html" rect.bar)"
[[ "$hover" == "block: trajectory 0 (batch 0), policy v0, learned, 0 s to 667 ms (667 ms)" ]] ||
  fail "hovering the rl report's first bar showed '$hover'"
echo "ok: rl and moe reports: no JavaScript errors, hover shows the op"

# --- the planner and the job simulation. report_check NAME SELECTOR HOVER-PREFIX COLOUR PIXELS:
# no JavaScript error, hovering the first SELECTOR shows HOVER-PREFIX..., and a 1200x900
# screenshot with at least 30 colours and PIXELS pixels of the page's main COLOUR.
report_check() {
  local name="$1" selector="$2" want="$3" colour="$4" min="$5" hover shot
  hover="$(hover_check "$tmp/$name.html" "$selector")"
  [[ "$hover" == "block: $want"* ]] || fail "$name: hovering the first $selector showed '$hover'"
  shot="$(screenshot_check "$tmp/$name.html" 1200,900 "$colour")"
  [[ "$shot" =~ ^colours\ ([0-9]+)\ pixels\ ([0-9]+)$ ]] || fail "$name: PNG check gave '$shot'"
  ((BASH_REMATCH[1] >= 30)) || fail "the $name screenshot looks blank: $shot"
  ((BASH_REMATCH[2] >= min)) || fail "the $name screenshot shows too few pixels of #$colour: $shot"
  echo "ok: $name report: no JavaScript errors, hover shows \"$hover\", screenshot $shot"
}
"$stepsim" plan scenarios/design-case.yaml --html "$tmp/plan.html" >/dev/null
"$stepsim" plan scenarios/design-case.yaml --sweep cards=16:64:8 --sweep efficiency=0.3:0.5:0.05 --html "$tmp/sweep.html" >/dev/null
"$stepsim" job scenarios/job-1024.yaml --runs 200 --html "$tmp/job.html" >/dev/null 2>&1
# The design case's memory bars (the 10 GiB allowance in teal, ~64 x 130 px each); the sweep's
# green cells (18 of ~30 x 22 px); the job's histogram bins and overhead bars in blue. A fraction
# of each, so that small layout changes do not break the test.
report_check plan rect.col "weights (ZeRO-3): " 76b7b2 5000
report_check sweep rect.cell "cards = 16, efficiency = 0.3 / " 59a14f 5000
report_check job rect.col "completion " 4e79a7 5000
