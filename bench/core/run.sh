#!/usr/bin/env bash
# Build the core cost benchmark in an optimized build and run it; writes
# bench/core/results.md (table, exact command, machine, source commit and,
# if perf is installed, where the CPU time goes), its data set
# bench/core/data/{core,meta}.csv and the plot bench/core/core.svg drawn
# from them by bench/core/plot.sh. Usage:
#   bench/core/run.sh [messages per configuration, default 2000]
# BUILD=dir picks the build directory (default build-bench, made here if
# absent); OUT_DIR=dir writes results, data and plot there instead of
# bench/core (a trial run that leaves the committed results alone).
set -euo pipefail
cd "$(dirname "$0")/../.."
msgs=${1:-2000}
build=${BUILD:-build-bench}
outdir=${OUT_DIR:-bench/core}
out=$outdir/results.md
cmd="bench/core/run.sh $msgs"
[ -z "${BUILD:-}" ] || cmd="BUILD=$BUILD $cmd"
command -v gnuplot >/dev/null ||
	{ echo "run.sh: gnuplot missing (scripts/deps.sh installs it)" >&2; exit 1; }
mkdir -p "$outdir/data"
if [ ! -d "$build" ]; then
	meson setup "$build" -Dbuildtype=release -Dunit_only=true >/dev/null
fi
ninja -C "$build" -j2 bench/core/mrbench-core >/dev/null
"$build/bench/core/mrbench-core" -m "$msgs" -o "$out" \
	-C "$outdir/data/core.csv" -c "$cmd"
dirty=$(git status --porcelain -- lib/core | wc -l)
commit=$(git rev-parse --short HEAD)
echo "- source: commit $commit, lib/core files with uncommitted changes: $dirty" >>"$out"
model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo |
	awk '{print $1, $2}')
{
	echo "key,value"
	echo "date,$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit,$commit$([ "$dirty" = 0 ] || echo '+dirty')"
	echo "machine,$(nproc) vCPU $model"
	echo "command,$cmd"
} >"$outdir/data/meta.csv"
bash bench/core/plot.sh "$outdir" >/dev/null
{
	echo
	echo "![lib/core Mpps per core for each configuration](core.svg)"
	echo
	echo "The plot is drawn from data/core.csv and data/meta.csv by \`bench/core/plot.sh\` (re-run it alone to re-plot)."
} >>"$out"
if command -v perf >/dev/null 2>&1; then
	data=$(mktemp)
	trap 'rm -f "$data"' EXIT
	if perf record -q -o "$data" "$build/bench/core/mrbench-core" \
		-m $((msgs / 4 + 1)) >/dev/null 2>&1; then
		{
			echo
			echo "## Where the CPU time goes (perf, all four configurations, $((msgs / 4 + 1)) messages each)"
			echo
			echo '```'
			# awk, not head: head's early exit would kill grep
			# with SIGPIPE, which pipefail and set -e turn into
			# the end of this script.
			perf report -i "$data" --no-children --stdio 2>/dev/null |
				grep -E '^ +[0-9]+\.[0-9]+%' | awk 'NR <= 12'
			echo '```'
			echo
			echo "The whole process is profiled, setup included (_int_malloc and the kernel page faults are the endpoints, pools and 1 MiB regions being created). crc32c_hw_update: the ICRC (seal on send, verify on receive) over each 4 KiB packet; memmove: the core's gather into the transmit buffer plus the harness's link copy and placement; mrsim_*: the harness."
		} >>"$out"
	fi
	rm -f "$data"
fi
cat "$out"
