#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/modes.sh: what one ib_write_bw pair's mode (FINDINGS 17.3,
# 20, 22) goes with. Per repetition one pair (64 KiB, -D SECS, default 5,
# at least 3) on a veth link (bench/wire/link.sh); once the pair's four
# threads are up (the client's, launched at 2 s, appear at about 2.5 s
# when idle, seconds later on a loaded machine): 0.7 s later, four
# samples STEP = 0.15 * (SECS - 1) s apart (0.6 s at 5) of their CPU,
# %CPU, class and priority (ps.REP: pid tid psr pcpu cls rtprio comm;
# only the threads of the link's namespaces, not another engineer's
# mrdp-*), their context switches at the first sample and STEP after the
# last (cs0/cs1.REP: pid tid comm voluntary nonvoluntary migrations; when,
# in t.REP), and the devices' counters afterwards (statsA/statsB.REP:
# metaroce-ctl stats --last, that repetition's processes). cs1 thus
# comes 0.7 + 4 * STEP s (1.9 at 3, 3.1 at 5) after the client's threads
# appear, on that schedule whatever each sample costs, and the client
# lives about SECS from then. (cs1 used to be taken 5.7 s after the
# repetition began whatever SECS and however late the client started:
# at SECS=3 it came out empty.)
# PIN=progs: both progress threads on CPU 1, both applications on CPU 0
# (taskset when the threads are up and at each sample); split: each
# process's two on different CPUs (server app 0, client app 1); same:
# each process's two on one CPU; apps: only the applications on CPU 0
# (with METAROCE_DP_CPU=1). Root.
# Usage: [PIN=...] [OUT=DIR] nice -n 5 bench/wire/modes.sh [BUILD] [REPS]
set -u
cd "$(dirname "$0")/../.." || exit 1
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "modes.sh: no build ${1:-build}" >&2; exit 1; }
SECS=${SECS:-5} REPS=${2:-8} PIN=${PIN:-}
[[ $SECS =~ ^[0-9]+$ ]] && [ "$SECS" -ge 3 ] ||
	{ echo "modes.sh: SECS=$SECS: whole seconds, at least 3 (the samples take 0.1 + 0.6 * SECS s of the client's run)" >&2; exit 1; }
STEP_US=$((150000 * (SECS - 1)))
. bench/wire/link.sh
wire_need modes.sh ib_write_bw taskset
wire_link modes.sh mrq
wire_addr modes.sh 10.86.0
wire_devices modes.sh "$B" "${WIRE_PORT:-net_mrpkt0}" mrqa0 mrqb0 10.87.0
OUT=${OUT:-/tmp/modes.$$}; mkdir -p "$OUT"; echo "modes.sh: samples in $OUT"
# Few processes per sample (on a loaded machine each costs tens of ms,
# and the samples must fit in the client's run): the pair's pids are
# looked up once, threads and counters read with one ps and one awk.
apps() { # the pids of the pair's ib_write_bw processes (NSA's first)
	local p c
	for p in $(ip netns pids "$NSA") $(ip netns pids "$NSB"); do
		read -r c 2>/dev/null <"/proc/$p/comm" && [ "$c" = ib_write_bw ] &&
			echo "$p"
	done
}
tasks() { # PID...: the task directories of their four threads
	local p t c
	for p in "$@"; do
		for t in /proc/"$p"/task/*; do
			read -r c 2>/dev/null <"$t/comm" || continue
			case $c in ib_write_bw|mrdp-mrq*) echo "$t";; esac
		done
	done
}
threads() { # PID...: their threads (ps.REP's lines)
	local IFS=,
	[ $# -gt 0 ] || return 0
	ps -Lo pid=,tid=,psr=,pcpu=,cls=,rtprio=,comm= -p "$*" 2>/dev/null |
		awk '$7 ~ /ib_write_bw|mrdp-mrq/'
}
cs() { # PID...: pid tid comm voluntary nonvoluntary migrations
	local t f=()
	for t in $(tasks "$@"); do f+=("$t/comm" "$t/status" "$t/sched"); done
	[ ${#f[@]} -gt 0 ] || return 0
	awk 'function out() { if (id != "") print id, v, n, m }
		FILENAME ~ /comm$/ { out(); split(FILENAME, d, "/")
			id = d[3] " " d[5] " " $0; v = n = m = ""; next }
		/^voluntary_ctxt/ {v = $2} /^nonvoluntary_ctxt/ {n = $2}
		/nr_migrations/ {m = $3} END {out()}' "${f[@]}" 2>/dev/null
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
sample() { # REP
	local r=$1 i k d t0 pids=()
	# The server's two threads, then the client's: up to 30 s.
	for i in $(seq 300); do
		mapfile -t pids < <(apps)
		[ "$(tasks "${pids[@]}" | wc -l)" -ge 4 ] && break
		sleep 0.1
	done
	[ -n "$PIN" ] && pin
	sleep 0.7
	t0=${EPOCHREALTIME//[.,]/} # us
	echo "cs0 $EPOCHREALTIME" >"$OUT/t.$r"
	cs "${pids[@]}" >"$OUT/cs0.$r"
	# On a schedule from cs0, whatever each sample costs.
	for k in 1 2 3 4; do
		[ -n "$PIN" ] && pin
		threads "${pids[@]}"
		echo
		d=$((t0 + k * STEP_US - ${EPOCHREALTIME//[.,]/}))
		[ $d -le 0 ] || { printf -v d '%d.%06d' $((d / 1000000)) $((d % 1000000)); sleep "$d"; }
	done >"$OUT/ps.$r"
	echo "cs1 $EPOCHREALTIME" >>"$OUT/t.$r"
	cs "${pids[@]}" >"$OUT/cs1.$r"
}
for r in $(seq "$REPS"); do
	sample "$r" &
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
