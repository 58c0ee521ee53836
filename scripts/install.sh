#!/usr/bin/env bash
# Sets up if needed, builds, and installs the stepsim binary under PREFIX/bin (default ~/.local).
# Usage: scripts/install.sh [PREFIX]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prefix="${1:-$HOME/.local}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" --target stepsim
build="${STEPSIM_BUILD_DIR:-$root/build}"
cmake --install "$build" --prefix "$prefix" >&2
bin="$(cd "$prefix/bin" && pwd)"
echo "installed $bin/stepsim"
case ":$PATH:" in
  *":$bin:"*) ;;
  *) echo "note: $bin is not on your PATH; add it with: export PATH=\"$bin:\$PATH\"" ;;
esac
