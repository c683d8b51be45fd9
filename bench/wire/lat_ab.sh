#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/lat_ab.sh: perftest latency pairs over one veth link (as
# targets.sh), settings interleaved: every rep runs every tool under every
# setting in turn, so the settings share the machine's minutes (this
# machine is shared and noisy: only side-by-side ratios mean anything).
# Root.
# Usage: bench/wire/lat_ab.sh [-r REPS] [-n ITERS] [-t TOOLS] [-l LOADPAIRS]
#                             SETTING...
#   SETTING  LABEL[@BUILD_DIR][:VAR=VALUE[,VAR=VALUE...]], e.g.
#            def  rt0:METAROCE_DP_RTPRIO=0  new@build-new
#   TOOLS    comma-separated (ib_send_lat,ib_read_lat,ib_write_lat,
#            udp_lat: qperf's kernel anchor, rc_lat: qperf's RC, -e: the
#            perftest tool with a completion channel, e.g. ib_send_lat-e)
#            bwK: K ib_write_bw 64 KiB -D 3 pairs at once under the
#            setting (wire_pairs), their aggregate Gb/s in "typical";
#            BW_SECS (environment) for another -D
#            rc_lat's server runs under the setting too (its build and
#            variables), one per run: the responder decides it
#   LOADPAIRS ib_write_bw 64 KiB pairs of the first build at the defaults
#            running all the while on the same devices (a load)
# Prints one line per run: rep tool setting typical p99 load; with STATS=1
# (environment) also each process's progress counters per iteration
# (the stats files the run left, lib/dp/mrdp_counters.h).
set -u
cd "$(dirname "$0")/../.." || exit 1
REPS=3 N=3000 TOOLS=ib_send_lat,ib_read_lat,ib_write_lat LOADP=0
while getopts r:n:t:l: o; do
	case $o in
	r) REPS=$OPTARG ;;
	n) N=$OPTARG ;;
	t) TOOLS=$OPTARG ;;
	l) LOADP=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-r REPS] [-n N] [-t TOOLS] [-l LOADPAIRS] SETTING..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "lat_ab.sh: needs root" >&2; exit 1; }
WIRE_PORT=${WIRE_PORT:-net_mrpkt0}
. bench/wire/link.sh
wire_need lat_ab.sh qperf ib_send_lat ib_write_bw
wire_link lat_ab.sh mrl
wire_addr lat_ab.sh 10.86.0
# The first setting's build makes the devices (the record is the same for
# every build).
first=${1%%:*}
B0=build
[[ $first == *@* ]] && B0=${first#*@}
B0=$(cd "$B0" && pwd) || exit 1
wire_devices lat_ab.sh "$B0" "$WIRE_PORT" mrla mrlb 10.87.0
load() { cut -d' ' -f1 /proc/loadavg; }

# run BUILD ENVS TOOL -> "typical p99"
run() {
	local b=$1 envs=$2 tool=$3 e=() opt=() sp
	[ -n "$envs" ] && IFS=, read -ra e <<<"$envs"
	case $tool in
	udp_lat)
		inA env "${e[@]}" nice -n 5 qperf -lp 19877 -t 2 -m 64 10.86.0.2 \
			udp_lat 2>/dev/null | awk '/latency/ {v=$3; u=$4; if (u == "ms") v *= 1000; if (u == "ns") v /= 1000; print v, "-"}'
		return ;;
	rc_lat)
		# Not inB (a function: $! would be its subshell, not timeout,
		# which passes the kill on to qperf).
		ip netns exec "$NSB" env "${e[@]}" nice -n 5 timeout 60 \
			"$b/utils/metaroce-run" qperf -lp 19878 >/dev/null 2>&1 &
		sp=$!
		sleep 1
		inA env "${e[@]}" nice -n 5 timeout 60 "$b/utils/metaroce-run" \
			qperf -lp 19878 -li mrla -ri mrlb -t 2 -m 64 10.86.0.2 \
			rc_lat 2>/dev/null | awk '/latency/ {v=$3; u=$4; if (u == "ms") v *= 1000; if (u == "ns") v /= 1000; print v, "-"}'
		kill "$sp" 2>/dev/null
		wait "$sp" 2>/dev/null
		return ;;
	bw[0-9]*)
		SECS=${BW_SECS:-3} B=$b wire_pairs "${tool#bw}" mrla mrlb "" "${e[@]}"
		echo " -"
		return ;;
	*-e) tool=${tool%-e}; opt=(-e) ;;
	esac
	touch "$W/mark"
	env "${e[@]}" setsid ip netns exec "$NSB" nice -n 5 timeout 90 \
		"$b/utils/metaroce-run" "$tool" -d mrlb -p 18690 -s 64 -n "$N" \
		"${opt[@]}" -F >"$W/srv" 2>&1 &
	sp=$!
	sleep 1
	env "${e[@]}" setsid ip netns exec "$NSA" nice -n 5 timeout 90 \
		"$b/utils/metaroce-run" "$tool" -d mrla -p 18690 -s 64 -n "$N" \
		"${opt[@]}" -F 10.86.0.2 >"$W/cli" 2>&1
	wait "$sp"
	awk 'NF >= 9 && $1 == 64 {print $5, $8; f=1} END {if (!f) print "- -"}' "$W/cli"
	[ "${STATS:-0}" = 1 ] && find "$W/run" -name 'metaroce.stats.*' \
		-newer "$W/mark" -print0 | xargs -0r python3 -c '
import json, sys
keys = ("progress_rounds", "inline_rounds", "sleeps", "wake_frame",
	"wake_kick", "wake_timer", "spins", "spin_cut_memory",
	"spin_cut_crowd", "lease_sleeps")
for f in sys.argv[2:]:
	d = json.load(open(f))
	print("    %s:" % d.get("device"), " ".join("%s %.2f" % (k, d.get(k, 0) / float(sys.argv[1])) for k in keys), file=sys.stderr)
' "$N"
}

# The kernel anchor's server (rc_lat's runs per setting).
if [[ $TOOLS == *_lat* ]]; then
	# Not inB: $! of a function is its subshell, and the cleanup's kill
	# of it left qperf running after each run.
	ip netns exec "$NSB" "$B0/utils/metaroce-run" qperf -lp 19877 \
		>/dev/null 2>&1 &
	PIDS+=($!)
	sleep 1
fi
LP=()
if [ "$LOADP" -gt 0 ]; then
	for k in $(seq "$LOADP"); do
		setsid ip netns exec "$NSB" nice -n 5 timeout 900 \
			"$B0/utils/metaroce-run" ib_write_bw -d mrlb \
			-p $((18700 + k)) -s 65536 -D 600 -F >"$W/lsrv.$k" 2>&1 &
		PIDS+=($!)
	done
	sleep 2
	for k in $(seq "$LOADP"); do
		setsid ip netns exec "$NSA" nice -n 5 timeout 900 \
			"$B0/utils/metaroce-run" ib_write_bw -d mrla \
			-p $((18700 + k)) -s 65536 -D 600 -F 10.86.0.2 \
			>"$W/lcli.$k" 2>&1 &
		LP+=($!)
		PIDS+=($!)
	done
	sleep 3
fi
echo "# lat_ab.sh $*: $(date -u '+%F %H:%M UTC'), $(git log -1 --format=%h), port $WIRE_PORT, -n $N, load pairs $LOADP, uptime: $(uptime)"
printf '%-3s %-14s %-22s %9s %9s %6s\n' rep tool setting typical p99 load
for r in $(seq "$REPS"); do
	IFS=, read -ra tl <<<"$TOOLS"
	for t in "${tl[@]}"; do
		for s in "$@"; do
			lab=${s%%:*} envs=
			[[ $s == *:* ]] && envs=${s#*:}
			b=build
			[[ $lab == *@* ]] && b=${lab#*@}
			b=$(cd "$b" && pwd) || exit 1
			read -r ty p9 <<<"$(run "$b" "$envs" "$t")"
			printf '%-3s %-14s %-22s %9s %9s %6s\n' "$r" "$t" "${lab%@*}" "$ty" "$p9" "$(load)"
		done
	done
done
echo "# end $(date -u '+%H:%M UTC'), uptime: $(uptime)"
