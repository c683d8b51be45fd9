#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/lat_budget.sh: where the time of one ping-pong goes, from the
# scheduler's and the system calls' own timestamps (no probe in our code):
# a perftest latency pair on one veth link (as targets.sh), then
# `perf record -a` of sendto/sendmmsg entry/exit, sched_waking and sched_switch for
# WINDOW seconds of its steady state, read by lat_budget.py. Root.
# Usage: bench/wire/lat_budget.sh [BUILD_DIR] [TOOL] [WINDOW]
#   TOOL ib_send_lat (default), ib_write_lat or ib_read_lat; WINDOW 0.5
#   WIRE_PORT (environment): the port kind, net_mrpkt0 as targets.sh
#   (net_af_packet0 for the PMD)
set -u
cd "$(dirname "$0")/../.." || exit 1
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "lat_budget.sh: no build directory ${1:-build}" >&2; exit 1; }
TOOL=${2:-ib_send_lat}
WIN=${3:-0.5}
WIRE_PORT=${WIRE_PORT:-net_mrpkt0}
[ "$(id -u)" = 0 ] || { echo "lat_budget.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need lat_budget.sh perf python3 "$TOOL"
wire_link lat_budget.sh mrq
wire_addr lat_budget.sh 10.86.0
wire_devices lat_budget.sh "$B" "$WIRE_PORT" mrqa mrqb 10.87.0
# Long enough to outlast the window at any load: 20,000 iterations ended
# before the window on a quiet host (35 us round trips: 0.7 s against the
# 3 s start-up wait), which printed "0 one-ways" (FINDINGS 19, 21).
N=200000
setsid ip netns exec "$NSB" timeout 120 "$B/utils/metaroce-run" "$TOOL" \
	-d mrqb -p 18690 -s 64 -n $N -F >"$W/srv" 2>&1 &
SP=$!
PIDS+=($SP)
sleep 1
setsid ip netns exec "$NSA" timeout 120 "$B/utils/metaroce-run" "$TOOL" \
	-d mrqa -p 18690 -s 64 -n $N -F 10.86.0.2 >"$W/cli" 2>&1 &
CP=$!
PIDS+=($CP)
sleep 3
# The two tools' processes are those of the two devices' progress
# threads (named mrdp-DEVICE; perftest's threads share their pid): a
# one-way is told by which process sends, whoever of its threads does
# (lat_budget.py).
perf record -q -a -o "$W/perf.data" -e syscalls:sys_enter_sendto \
	-e syscalls:sys_exit_sendto -e syscalls:sys_enter_sendmmsg \
	-e syscalls:sys_exit_sendmmsg -e sched:sched_waking \
	-e sched:sched_switch -- sleep "$WIN" >/dev/null 2>&1
L=$(cut -d' ' -f1 /proc/loadavg)
wait "$CP"
wait "$SP"
echo "$TOOL over $WIRE_PORT, $(date -u '+%F %H:%M UTC'), load $L, $(git log -1 --format=%h 2>/dev/null)"
awk 'NF >= 9 && $1 == 64 {print "perftest (whole run): typical " $5 " us, p99 " $8 " us"}' "$W/cli"
perf script -i "$W/perf.data" -F comm,pid,tid,cpu,time,event,trace 2>/dev/null |
	LB_DEVS="mrqa mrqb" python3 bench/wire/lat_budget.py
