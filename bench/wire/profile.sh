#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/profile.sh: the per-packet cost budget of one perftest pair
# over one veth link (two namespaces, af_packet ports), as in run.sh.
# While the test runs, for a window of WINDOW seconds after a warm-up:
#   - perf record -a -e cpu-clock -g, the samples of both processes'
#     threads kept (the kernel work done in their context included:
#     af_packet transmit, the veth hop and the peer's af_packet receive run
#     in the sender's system call);
#   - perf stat --per-thread: CPU time, context switches, system calls by
#     kind;
#   - the datapath counters (tx_pkts, rx_frames) at the window's start
#     and end, from the stats files the datapath writes every second.
# Prints, per side and thread, the CPU time per packet in each stage:
# application (perftest, libibverbs), provider (metaroce_*), core
# (lib/core: mr_*, CRC32C), datapath (lib/dp: mrdp_*, DPDK), libc (memcpy,
# locks), kernel; and the system calls per packet. Cycles = ns x the CPU's
# nominal GHz (hardware counters are not available in this VM).
# Root. Usage: bench/wire/profile.sh [BUILD_DIR] [TOOL ARGS...]
#   default: build ib_write_bw -s 65536 -D 20
# Environment: WINDOW=4 (seconds profiled), WARM=2 (seconds skipped),
# OUT=dir (keep perf.data and the raw reports there).
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "profile.sh: no build directory ${1:-build}" >&2; exit 1; }
shift
[ $# -gt 0 ] || set -- ib_write_bw -s 65536 -D 20
TOOL=$1
shift
WINDOW=${WINDOW:-4}
WARM=${WARM:-2}
[ "$(id -u)" = 0 ] || { echo "profile.sh: needs root" >&2; exit 1; }
for t in perf "$TOOL" python3; do
	command -v "$t" >/dev/null || { echo "profile.sh: missing $t" >&2; exit 1; }
done

T=$$
NSA=mrpA$T
NSB=mrpB$T
W=$(mktemp -d /tmp/mrprof.XXXXXX)
OUT=${OUT:-$W/out}
mkdir -p "$OUT"
export METAROCE_RUNDIR=$W/run
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$W/run"
	if [ "$OUT" = "$W/out" ]; then rm -rf "$W"; else rmdir "$W" 2>/dev/null; fi
}
trap cleanup EXIT INT TERM

ip netns add "$NSA" && ip netns add "$NSB" &&
	ip link add mpa$T netns "$NSA" type veth peer name mpb$T netns "$NSB" &&
	ip -n "$NSA" link set mpa$T mtu 9000 up &&
	ip -n "$NSB" link set mpb$T mtu 9000 up &&
	ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up &&
	ip -n "$NSA" addr add 10.84.0.1/24 dev mpa$T &&
	ip -n "$NSB" addr add 10.84.0.2/24 dev mpb$T &&
	ip netns exec "$NSA" "$B/utils/metaroce-ctl" link add mrpa \
		--port "${WIRE_PORT:-net_af_packet0},iface=mpa$T" --ip 10.85.0.1/24 >/dev/null &&
	ip netns exec "$NSB" "$B/utils/metaroce-ctl" link add mrpb \
		--port "${WIRE_PORT:-net_af_packet0},iface=mpb$T" --ip 10.85.0.2/24 >/dev/null ||
	{ echo "profile.sh: cannot build the link" >&2; exit 1; }

setsid ip netns exec "$NSB" timeout 120 "$B/utils/metaroce-run" "$TOOL" \
	-d mrpb "$@" >"$OUT/srv.log" 2>&1 &
PIDS+=($!)
sleep 1
setsid ip netns exec "$NSA" timeout 120 "$B/utils/metaroce-run" "$TOOL" \
	-d mrpa "$@" 10.84.0.2 >"$OUT/cli.log" 2>&1 &
PIDS+=($!)
sleep "$WARM"
# The perftest processes (metaroce-run execs the tool).
SRV=$(pgrep -n -f "$TOOL -d mrpb")
CLI=$(pgrep -n -f "$TOOL -d mrpa")
[ -n "$SRV" ] && [ -n "$CLI" ] || { echo "profile.sh: the pair did not start" >&2; cat "$OUT"/*.log >&2; exit 1; }
stats() { # pid -> "tx_pkts rx_frames" of its stats file
	local f
	f=$(find "$W/run" -name "metaroce.stats.$1" 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "0 0"; return; }
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); p=j["planes"]; print(sum(x["tx_pkts"] for x in p), sum(x["rx_frames"] for x in p))' "$f"
}
# Their threads (main, progress, EAL interrupt): their samples are picked
# out of the system-wide profile.
TIDS=$(ls /proc/"$SRV"/task /proc/"$CLI"/task 2>/dev/null | grep -x "[0-9][0-9]*" | paste -sd,)
S0=$(stats "$SRV")
C0=$(stats "$CLI")
SC="syscalls:sys_enter_sendto,syscalls:sys_enter_ppoll,syscalls:sys_enter_futex,syscalls:sys_enter_sched_yield,syscalls:sys_enter_write,syscalls:sys_enter_read,syscalls:sys_enter_poll,syscalls:sys_enter_recvfrom,raw_syscalls:sys_enter"
# Samples system-wide (perf record -p refused these processes' thread
# lists), filtered by thread below; they give each thread's split between
# the stages. perf record -a needs seconds to start on a busy machine, so
# the exact CPU time and system calls per thread come from perf stat over
# WINDOW seconds started once the sampling runs.
perf record -q -a -e cpu-clock -F 2000 -g -o "$OUT/perf.data" \
	-- sleep $((WINDOW + 6)) >"$OUT/record.err" 2>&1 &
RP=$!
sleep 4
T0=$(date +%s.%N)
perf stat -x, --per-thread -e "task-clock,context-switches,$SC" \
	-p "$SRV,$CLI" -o "$OUT/stat.csv" -- sleep "$WINDOW" \
	2>"$OUT/stat.err"
T1=$(date +%s.%N)
S1=$(stats "$SRV")
C1=$(stats "$CLI")
wait "$RP"
wait "${PIDS[1]}" 2>/dev/null
wait "${PIDS[0]}" 2>/dev/null
perf report -i "$OUT/perf.data" --stdio --no-children -g none -t '|' \
	--tid "$TIDS" --sort pid,dso,sym -F overhead,sample,pid,dso,sym \
	2>/dev/null >"$OUT/report.txt"

GHZ=$(awk -F': ' '/^cpu MHz/ {print $2 / 1000; exit}' /proc/cpuinfo)
echo "== $TOOL $* (client $CLI, server $SRV), window $WINDOW s, load $(cut -d' ' -f1-3 /proc/loadavg)"
grep -h 'BW average\|#bytes' -A1 "$OUT/cli.log" | tail -1
python3 "$TOP/bench/wire/profile_budget.py" "$OUT/report.txt" "$OUT/stat.csv" \
	"$CLI" "$SRV" "$C0" "$C1" "$S0" "$S1" "$T0" "$T1" "${GHZ:-0}" \
	"$(awk '/^ *[0-9]+ +[0-9]+ /{l=$4} END {print l + 0}' "$OUT/cli.log")"
