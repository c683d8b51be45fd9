#!/usr/bin/env bash
# Build the core cost benchmark in an optimized build and run it; writes
# bench/core/results.md (table, exact command, machine, source commit and,
# if perf is installed, where the CPU time goes). Usage:
#   bench/core/run.sh [messages per configuration, default 2000]
set -euo pipefail
cd "$(dirname "$0")/../.."
msgs=${1:-2000}
build=build-bench
out=bench/core/results.md
if [ ! -d "$build" ]; then
	meson setup "$build" -Dbuildtype=release -Dunit_only=true >/dev/null
fi
ninja -C "$build" -j2 bench/core/mrbench-core >/dev/null
"$build/bench/core/mrbench-core" -m "$msgs" -o "$out" \
	-c "bench/core/run.sh $msgs"
dirty=$(git status --porcelain -- lib/core | wc -l)
echo "- source: commit $(git rev-parse --short HEAD), lib/core files with uncommitted changes: $dirty" >>"$out"
if command -v perf >/dev/null 2>&1; then
	data=$(mktemp)
	if perf record -q -o "$data" "$build/bench/core/mrbench-core" \
		-m $((msgs / 4 + 1)) >/dev/null 2>&1; then
		{
			echo
			echo "## Where the CPU time goes (perf, all four configurations, $((msgs / 4 + 1)) messages each)"
			echo
			echo '```'
			perf report -i "$data" --no-children --stdio 2>/dev/null |
				grep -E '^ +[0-9]+\.[0-9]+%' | head -12
			echo '```'
			echo
			echo "The whole process is profiled, setup included (_int_malloc and the kernel page faults are the endpoints, pools and 1 MiB regions being created). crc32c_hw_update: the ICRC (seal on send, verify on receive) over each 4 KiB packet; memmove: the core's gather into the transmit buffer plus the harness's link copy and placement; mrsim_*: the harness."
		} >>"$out"
	fi
	rm -f "$data"
fi
cat "$out"
