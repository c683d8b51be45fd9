#!/usr/bin/env bash
# The figures of metaroce-sim (bench/sim/results.md), each one command.
# Usage: bench/sim/run.sh [BUILD_DIR] [FIGURE...]
#   figures: loss planes planes4k planes4k1m planes4k4m incast incast_one planefail
#   planefail_back blackhole collectives (default: all)
# Writes bench/sim/data/<figure>/ (sweep.csv, each point's summary.json
# and time series) and then draws the plots (bench/sim/plot.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
shift || true
sim=$build/utils/metaroce-sim/metaroce-sim
[ -x "$sim" ] || { echo "run.sh: build $sim first (ninja -C $build)" >&2; exit 1; }
figs=("$@")
[ ${#figs[@]} -gt 0 ] || figs=(loss planes planes4k planes4k1m planes4k4m incast incast_one planefail planefail_back blackhole collectives)
d=bench/sim/data
for f in "${figs[@]}"; do
	rm -rf "${d:?}/$f"
	case $f in
	loss) # long flow, host 0 -> host 1, every loss rate, both transports
		"$sim" sweep --hosts 2 --size 8M --stop-ms 3000 \
			--vary loss=0,0.001,0.01,0.05,0.1 \
			--vary transport=metaroce,roce --out "$d/loss" ;;
	planes) # all-to-all of 16 hosts (4 leaves x 4 spines per plane)
		"$sim" sweep --hosts 16 --hosts-per-leaf 4 --spines 4 \
			--workload alltoall --size 256K \
			--vary planes=1,2,4,8 --vary transport=metaroce,roce \
			--out "$d/planes" ;;
	planes4k) # all-to-all of 64 hosts: 4032 connections at once
		"$sim" sweep --hosts 64 --hosts-per-leaf 16 --spines 4 \
			--workload alltoall --size 256K --stop-ms 3000 \
			--vary planes=1,2,4,8 --vary transport=metaroce,roce \
			--out "$d/planes4k" ;;
	planes4k1m) # the same 4032 connections with 1 MiB per pair: at 8
		# planes 256 KiB is ~200 us, of which the first RTT and the
		# tail are a fixed part; metaroce only (the baseline's
		# timeouts at 2-8 planes take minutes of CPU here)
		"$sim" sweep --hosts 64 --hosts-per-leaf 16 --spines 4 \
			--workload alltoall --size 1M --stop-ms 3000 \
			--vary planes=1,2,4,8 --vary transport=metaroce \
			--out "$d/planes4k1m" ;;
	planes4k4m) # and 4 MiB per pair: a collective of 2.7 ms at 8
		# planes, 21 ms at one (each point ~58M events, 2-3 CPU
		# minutes and 1.4 GB); metaroce only, as planes4k1m
		"$sim" sweep --hosts 64 --hosts-per-leaf 16 --spines 4 \
			--workload alltoall --size 4M --stop-ms 3000 \
			--vary planes=1,2,4,8 --vary transport=metaroce \
			--out "$d/planes4k4m" ;;
	blackhole) # spine 0 of plane 1 black-holes (its four leaf links
		# drop everything) 100 us into an all-to-all: the ECMP
		# black hole of a quarter of plane 1's source ports
		"$sim" sweep --hosts 16 --hosts-per-leaf 4 --spines 4 --planes 4 \
			--workload alltoall --size 1M --sample-us 5 \
			--fail plane=1,leaf=0,spine=0,at=100us \
			--fail plane=1,leaf=1,spine=0,at=100us \
			--fail plane=1,leaf=2,spine=0,at=100us \
			--fail plane=1,leaf=3,spine=0,at=100us --stop-ms 3000 \
			--vary transport=metaroce,roce --out "$d/blackhole" ;;
	incast) # 64 senders -> 1 under one leaf, queue every 2 us
		"$sim" sweep --hosts 65 --hosts-per-leaf 65 --workload incast \
			--size 256K --sample-us 2 \
			--vary transport=metaroce,roce --out "$d/incast" ;;
	incast_one) # the same with the start before MR-CC-17 (cc_start=one,
		# first_pkt_bytes=0: one MTU-sized packet, then the first hint)
		"$sim" sweep --hosts 65 --hosts-per-leaf 65 --workload incast \
			--size 256K --sample-us 2 --cc-start 1 --first-pkt 0 \
			--vary transport=metaroce,roce --out "$d/incast_one" ;;
	planefail) # plane 1 of 4 fails 100 us into an all-to-all, for good
		"$sim" sweep --hosts 16 --hosts-per-leaf 4 --spines 4 --planes 4 \
			--workload alltoall --size 1M --sample-us 5 \
			--fail plane=1,at=100us --stop-ms 3000 \
			--vary transport=metaroce,roce --out "$d/planefail" ;;
	planefail_back) # plane 1 of 4 fails 100 us into an all-to-all
		# and returns at 300 us: how soon it carries traffic again
		"$sim" sweep --hosts 16 --hosts-per-leaf 4 --spines 4 --planes 4 \
			--workload alltoall --size 1M --sample-us 5 \
			--fail plane=1,at=100us,until=300us --stop-ms 3000 \
			--vary transport=metaroce,roce --out "$d/planefail_back" ;;
	collectives) # 64 hosts, 4 leaves x 4 spines: ring all-reduce of
		# 16 MiB and all-to-all of 64 KiB per pair, lossless and 1%
		"$sim" sweep --hosts 64 --hosts-per-leaf 16 --spines 4 \
			--workload allreduce --size 16M --stop-ms 3000 \
			--vary loss=0,0.01 --vary transport=metaroce,roce \
			--out "$d/allreduce64"
		"$sim" sweep --hosts 64 --hosts-per-leaf 16 --spines 4 \
			--workload alltoall --size 64K --stop-ms 3000 \
			--vary loss=0,0.01 --vary transport=metaroce,roce \
			--out "$d/alltoall64" ;;
	*) echo "run.sh: unknown figure '$f'" >&2; exit 1 ;;
	esac
done
# Keep what the tables and plots need: each point's summary.json, and
# the time series of the figures drawn over time (their first 5 ms: a
# baseline waiting out IB timeouts samples idle links for seconds).
find "$d" \( -name '*.png' -o -name queues.csv \) -delete
for f in "${figs[@]}"; do
	case $f in
	incast | incast_one | planefail | planefail_back | blackhole)
		for t in "$d/$f"/*/timeseries.csv; do
			awk -F, 'NR == 1 || $1 <= 5000' "$t" >"$t.tmp" && mv "$t.tmp" "$t"
		done ;;
	planes | planes4k | planes4k1m | planes4k4m) # metaroce's, for the steady state
		# of targets.py (the baseline's last up to 0.5 s of samples)
		find "$d/$f" -path '*transport=roce*' -name timeseries.csv -delete ;;
	*) find "$d" -path "$d/${f/collectives/*64}/*" -name timeseries.csv -delete ;;
	esac
done
bench/sim/plot.sh
