#!/bin/sh
# Run one libFuzzer target for a bounded time on a temporary copy of its
# seed corpus, so the repository is never modified; crash artifacts go to
# the build directory. Usage: run_fuzz.sh <target> <corpus dir> <seconds>
# <artifact dir>
set -eu
target=$1 corpus=$2 secs=$3 artifacts=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -R "$corpus"/. "$tmp"/
mkdir -p "$artifacts"
"$target" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$artifacts"/ "$tmp"
