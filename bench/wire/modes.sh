#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/modes.sh: what one ib_write_bw pair's mode (FINDINGS 17.3,
# 20, 22) goes with. Per repetition one pair (64 KiB, -D SECS, default 5,
# at least 3) on a veth link (bench/wire/link.sh), and from 2.6 s on: four
# samples of its four threads' CPU, %CPU, class and priority (ps.REP: pid
# tid psr pcpu cls rtprio comm; only the threads of the link's namespaces,
# not another engineer's mrdp-*), their context switches at the first and
# after the last sample (cs0/cs1.REP: pid tid comm voluntary nonvoluntary
# migrations), and the devices' counters afterwards (statsA/statsB.REP:
# metaroce-ctl stats --last, that repetition's processes). The client
# starts at 2 s and runs SECS: the samples are 0.15 * (SECS - 1) s apart
# (0.6 s at 5) so that the last ends by 3.3 + 0.6 * (SECS - 1) s, a
# second or more before the client does (at 3 s the pair was gone at
# 5.7 s, when cs1 used to be taken whatever SECS).
# PIN=progs: both progress threads on CPU 1, both applications on CPU 0
# (taskset at 2.6 s); split: each process's two on different CPUs (server
# app 0, client app 1); same: each process's two on one CPU; apps: only
# the applications on CPU 0 (with METAROCE_DP_CPU=1). Root.
# Usage: [PIN=...] [OUT=DIR] nice -n 5 bench/wire/modes.sh [BUILD] [REPS]
set -u
cd "$(dirname "$0")/../.." || exit 1
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "modes.sh: no build ${1:-build}" >&2; exit 1; }
SECS=${SECS:-5} REPS=${2:-8} PIN=${PIN:-}
[[ $SECS =~ ^[0-9]+$ ]] && [ "$SECS" -ge 3 ] ||
	{ echo "modes.sh: SECS=$SECS: whole seconds, at least 3 (the samples need 2.6 s of the client's run)" >&2; exit 1; }
STEP=$(awk -v s="$SECS" 'BEGIN {printf "%.2f", 0.15 * (s - 1)}')
. bench/wire/link.sh
wire_need modes.sh ib_write_bw taskset
wire_link modes.sh mrq
wire_addr modes.sh 10.86.0
wire_devices modes.sh "$B" "${WIRE_PORT:-net_mrpkt0}" mrqa0 mrqb0 10.87.0
OUT=${OUT:-/tmp/modes.$$}; mkdir -p "$OUT"; echo "modes.sh: samples in $OUT"
threads() { # all threads of our namespaces' processes
	for p in $(ip netns pids "$NSA") $(ip netns pids "$NSB"); do
		ps -Lo pid=,tid=,psr=,pcpu=,cls=,rtprio=,comm= -p "$p" 2>/dev/null
	done | awk '$7 ~ /ib_write_bw|mrdp-mrq/'
}
cs() { # tid comm vol nonvol migrations
	for p in $(ip netns pids "$NSA") $(ip netns pids "$NSB"); do
		for t in /proc/$p/task/*; do
			c=$(cat $t/comm 2>/dev/null)
			case $c in ib_write_bw|mrdp-mrq*) ;; *) continue;; esac
			v=$(awk '/^voluntary_ctxt/{print $2}' $t/status 2>/dev/null)
			n=$(awk '/^nonvoluntary_ctxt/{print $2}' $t/status 2>/dev/null)
			m=$(awk '/nr_migrations/{print $3}' $t/sched 2>/dev/null)
			echo "$p ${t##*/} $c $v $n $m"
		done
	done
}
pin() { # PIN=split: each process's app and progress thread on different CPUs
	local p t c i=0
	for p in $(ip netns pids "$NSB") $(ip netns pids "$NSA"); do
		[ "$(cat /proc/$p/comm 2>/dev/null)" = ib_write_bw ] || continue
		for t in /proc/$p/task/*; do
			c=$(cat $t/comm 2>/dev/null)
			case $c in
			ib_write_bw) taskset -pc $([ "$PIN" = progs ] || [ "$PIN" = apps ] && echo 0 || echo $((i % 2))) ${t##*/} >>"$OUT/pin.log" 2>&1 ;;
			mrdp-mrq*) [ "$PIN" = apps ] || taskset -pc $(case $PIN in progs) echo 1;; same) echo $((i % 2));; *) echo $(((i + 1) % 2));; esac) ${t##*/} >>"$OUT/pin.log" 2>&1 ;;
			esac
		done
		i=$((i + 1))
	done
}
for r in $(seq "$REPS"); do
	( sleep 2.6; [ -n "$PIN" ] && pin; sleep 0.7; cs >"$OUT/cs0.$r"; for s in 1 2 3 4; do [ -n "$PIN" ] && pin; threads; echo; sleep "$STEP"; done >"$OUT/ps.$r"; cs >"$OUT/cs1.$r" ) &
	sp=$!
	g=$(wire_pairs 1 mrqa0 mrqb0 "")
	wait $sp
	sleep 1
	inA "$B/utils/metaroce-ctl" stats mrqa0 --last >"$OUT/statsA.$r" 2>&1
	inB "$B/utils/metaroce-ctl" stats mrqb0 --last >"$OUT/statsB.$r" 2>&1
	echo "rep $r: $g Gb/s load $(cut -d' ' -f1 /proc/loadavg) $(date -u +%H:%M:%S)"
	# Every sample of the same four threads, or the pair ended (or had
	# not begun) while sampling: say so rather than leave a short file.
	n0=$(wc -l <"$OUT/cs0.$r") n1=$(wc -l <"$OUT/cs1.$r")
	np=$(grep -c . "$OUT/ps.$r")
	[ "$n0" = 4 ] && [ "$n1" = 4 ] && [ "$np" = 16 ] ||
		echo "modes.sh: rep $r: threads seen: cs0 $n0, ps $np of 16, cs1 $n1 (4 expected): the pair was not running throughout" >&2
done
