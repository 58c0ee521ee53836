#!/usr/bin/env bash
# Installs the Debian packages stepsim needs to build, test and render reports.
# Idempotent: packages already installed are skipped; apt-get update runs at most once.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-graph-dev libspdlog-dev libfmt-dev libyaml-cpp-dev catch2 libeigen3-dev
  libcli11-dev nlohmann-json3-dev libbenchmark-dev
  chromium
)
# chromium renders the HTML report in the test suite (tests/html_browser.sh fails without it).
# Optional extras: scripts/bench.sh (valgrind), scripts/fuzz.sh (clang, libFuzzer).
if [[ "${STEPSIM_SETUP_EXTRAS:-1}" == "1" ]]; then
  packages+=(valgrind clang libfuzzer-14-dev)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present" >&2
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
