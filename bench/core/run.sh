#!/usr/bin/env bash
# Build the core cost benchmark in an optimized build and run it; writes
# bench/core/results.md (table, exact command, machine). Usage:
#   bench/core/run.sh [messages per configuration, default 200]
set -euo pipefail
cd "$(dirname "$0")/../.."
msgs=${1:-200}
build=build-bench
if [ ! -d "$build" ]; then
	meson setup "$build" -Dbuildtype=release -Dunit_only=true >/dev/null
fi
ninja -C "$build" -j2 bench/core/mrbench-core >/dev/null
"$build/bench/core/mrbench-core" -m "$msgs" -o bench/core/results.md \
	-c "bench/core/run.sh $msgs"
