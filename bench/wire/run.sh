#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire: one veth link between two network namespaces, measured four
# ways, written to bench/wire/results.md:
#   1. the raw DPDK ceiling of the link: dpdk-testpmd txonly -> rxonly over
#      net_af_packet, 64 B frames and MetaRoCE MTU-4096 frames (4214 B);
#   2. kernel TCP: iperf3, one stream, 10 s;
#   3. lib/dp alone (tests/dp/mrdp-peer): one-way stream of 4214 B frames
#      and the 64 B round trip through both datapaths;
#   4. verbs over the whole stack (metaroce-ctl devices, perftest):
#      ib_write_bw and ib_send_bw at 64 KiB, ib_write_lat at 64 B.
# Root. Usage: bench/wire/run.sh [BUILD_DIR] [SECONDS]
set -u
cd "$(dirname "$0")/../.."
TOP=$PWD
B=$(cd "${1:-build}" && pwd)
SECS=${2:-10}
OUT=$TOP/bench/wire/results.md

[ "$(id -u)" = 0 ] || { echo "run.sh: needs root" >&2; exit 1; }
for t in dpdk-testpmd iperf3 ib_write_bw ib_send_bw ib_write_lat; do
	command -v $t >/dev/null || { echo "run.sh: missing $t" >&2; exit 1; }
done

T=$$
NSA=mrwA$T
NSB=mrwB$T
VA=mwa$T
VB=mwb$T
W=$(mktemp -d /tmp/mrwire.XXXXXX)
export METAROCE_RUNDIR=$W/run
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

ip netns add "$NSA" && ip netns add "$NSB" &&
	ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB" &&
	ip -n "$NSA" link set "$VA" mtu 9000 up &&
	ip -n "$NSB" link set "$VB" mtu 9000 up &&
	ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up ||
	{ echo "run.sh: cannot build the link" >&2; exit 1; }
inA() { ip netns exec "$NSA" "$@"; }
inB() { ip netns exec "$NSB" "$@"; }

AFP="framesz=8192,blocksz=8192,framecnt=1024"
# Mbufs must hold a whole af_packet ring slot; the options must come before
# --txpkts (testpmd checks segment lengths against the mbuf size as it
# parses).
TPO="--mbuf-size=8320 --total-num-mbufs=8192"
# testpmd: one process per namespace, each on its own core (its main and
# forwarding lcores share that core; the main one only prints stats).
testpmd_rate() { # frame bytes -> "pps" (median of the per-second Rx-pps)
	local len=$1
	# timeout sends SIGINT to testpmd itself, which then prints its
	# totals and exits (a background job would ignore SIGINT).
	ip netns exec "$NSB" timeout -s INT $((SECS + 4)) dpdk-testpmd \
		--lcores=0@1,1@1 --no-huge -m 512 --no-pci --no-telemetry \
		--file-prefix=mrwB$T --vdev=net_af_packet0,iface=$VB,$AFP -- \
		$TPO --forward-mode=rxonly --auto-start --stats-period=1 \
		>"$W/rx.log" 2>&1 &
	local rp=$!
	sleep 2
	ip netns exec "$NSA" timeout -s INT "$SECS" dpdk-testpmd \
		--lcores=0@0,1@0 --no-huge -m 512 --no-pci --no-telemetry \
		--file-prefix=mrwA$T --vdev=net_af_packet0,iface=$VA,$AFP -- \
		$TPO --forward-mode=txonly --txpkts="$len" --auto-start \
		--stats-period=1 >"$W/tx.log" 2>&1
	wait "$rp" 2>/dev/null
	grep -o 'Rx-pps: *[0-9]*' "$W/rx.log" | awk '{print $2}' |
		awk '$1 > 100' | sort -n |
		awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print 0}'
}

echo "== testpmd 64 B"
P64=$(testpmd_rate 64)
echo "== testpmd 4214 B"
P4K=$(testpmd_rate 4214)
gbps() { awk -v p="$1" -v l="$2" 'BEGIN {printf "%.2f", p * l * 8 / 1e9}'; }

echo "== iperf3"
ip -n "$NSA" addr add 10.82.0.1/24 dev "$VA"
ip -n "$NSB" addr add 10.82.0.2/24 dev "$VB"
inB iperf3 -s -1 >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
TCP=$(inA iperf3 -c 10.82.0.2 -t "$SECS" -J 2>/dev/null |
	python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' 2>/dev/null)
TCP=${TCP:-failed}

echo "== lib/dp"
# Its own namespaces; the figures are printed by the test program.
DPLOG=$W/dp.log
MRDP_TEST_STREAM=200000 bash "$TOP/tests/dp/dp_echo.sh" \
	"$B/tests/dp/mrdp-peer" 3000 "$SECS" >"$DPLOG" 2>&1
DP_STREAM=$(grep -o 'stream .*' "$DPLOG" | head -1)
DP_RECV=$(grep -o 'stream received [0-9]* packets' "$DPLOG" | awk '{print $3}')
DP_RTT=$(grep -o 'round trip 64 B: .*' "$DPLOG" | sed 's/round trip 64 B: //')
DP_IDLE=$(grep -o 'idle device cost .*' "$DPLOG" | sed 's/idle device cost //')

echo "== verbs"
inA "$B/utils/metaroce-ctl" link add mrwa --port "net_af_packet0,iface=$VA" \
	--ip 10.83.0.1/24 >/dev/null &&
	inB "$B/utils/metaroce-ctl" link add mrwb \
		--port "net_af_packet0,iface=$VB" --ip 10.83.0.2/24 >/dev/null ||
	echo "run.sh: metaroce-ctl link add failed" >&2
# Each side in its own session: with the kernel's autogroup scheduling
# (sched_autogroup_enabled=1) one session's threads share one CPU share,
# so two sides started from one shell would compete as one "host" on a
# machine where other sessions run; on two hosts they would not.
# METAROCE_ENGINE_STATS=1: the endpoints print their counters at close
# (retransmissions, timeouts).
export METAROCE_ENGINE_STATS=1
ENG=$W/engine.txt
: >"$ENG"
perf() { # tool args... -> the tool's result line
	local tool=$1
	shift
	setsid ip netns exec "$NSB" timeout 120 "$B/utils/metaroce-run" \
		"$tool" -d mrwb "$@" >"$W/srv.log" 2>&1 &
	local sp=$!
	sleep 1
	setsid ip netns exec "$NSA" timeout 120 "$B/utils/metaroce-run" \
		"$tool" -d mrwa "$@" 10.82.0.2 >"$W/cli.log" 2>&1
	local rc=$?
	wait "$sp"
	{
		echo "$tool $*:"
		grep -ho 'engine counters:.*' "$W/cli.log" "$W/srv.log" |
			grep -o 'retx_pkts=[0-9]*\|timeouts=[0-9]*\|duplicates=[0-9]*\|tx_data_pkts=[0-9]*' |
			tr '\n' ' '
		echo
	} >>"$ENG"
	if [ $rc != 0 ]; then
		echo "failed (exit $rc)"
		return
	fi
	awk '/^ *[0-9]+ +[0-9]+ /{l=$0} END {print l}' "$W/cli.log" |
		sed 's/metaroce:.*//'
}
RUNS=${RUNS:-3}
# ib_*_bw: #bytes #iterations BW-peak BW-avg(MB/s) MsgRate
mbs2gbps() { awk -v m="$1" 'BEGIN {if (m == "") print "-"; else printf "%.2f", m * 1048576 * 8 / 1e9}'; }
med() { sort -n | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print ""}'; }
WBW_ALL= SBW_ALL= WLAT_ALL=
for r in $(seq "$RUNS"); do
	echo "== verbs run $r"
	l=$(perf ib_write_bw -s 65536 -n 2000 -F)
	WBW_ALL="$WBW_ALL $(mbs2gbps "$(echo "$l" | awk 'NF >= 5 {print $4}')")"
	l=$(perf ib_send_bw -s 65536 -n 2000 -F)
	SBW_ALL="$SBW_ALL $(mbs2gbps "$(echo "$l" | awk 'NF >= 5 {print $4}')")"
	# ib_write_lat: #bytes #iter min max typical avg stdev 99% 99.9%
	l=$(perf ib_write_lat -s 64 -n 2000 -F)
	WLAT_ALL="$WLAT_ALL $(echo "$l" | awk 'NF >= 6 {print $5}')"
done
WBW_G=$(echo $WBW_ALL | tr ' ' '\n' | grep -v '^-$' | med)
SBW_G=$(echo $SBW_ALL | tr ' ' '\n' | grep -v '^-$' | med)
WLAT_T=$(echo $WLAT_ALL | tr ' ' '\n' | med)

CEIL=$(gbps "$P4K" 4214)
pct() { awk -v a="$1" -v b="$2" 'BEGIN {if (a+0 > 0 && b+0 > 0) printf "%.0f%%", 100 * a / b; else print "-"}'; }

cat >"$OUT" <<EOF2
# bench/wire results

One veth pair (MTU 9000) between two network namespaces, one run,
$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPUs, load average at the end:
$(cut -d' ' -f1-3 /proc/loadavg) (other work shares this machine: the
figures move 10-40% between runs and are far below an idle machine's when
the load is high). Command: \`RUNS=$RUNS bench/wire/run.sh ${1:-build} $SECS\`.
Source: $(git -C "$TOP" log -1 --format='%h %s' 2>/dev/null | cut -c1-70).

## Raw ceiling of the link and kernel TCP

| what | 64 B frames | 4214 B frames (MetaRoCE MTU 4096) |
| --- | --- | --- |
| dpdk-testpmd txonly -> rxonly, net_af_packet | $P64 pps | $P4K pps = $CEIL Gb/s |
| kernel TCP, iperf3, 1 stream | - | $TCP Gb/s |

## lib/dp alone (tests/dp/mrdp-peer, no protocol engine)

| what | result |
| --- | --- |
| one-way stream of 4214 B frames (sender side) | $DP_STREAM |
| of which the receiver got | $DP_RECV of 200000 packets |
| 64 B round trip through both datapaths | $DP_RTT |
| idle device, whole process | $DP_IDLE |

## Verbs over the whole stack (perftest, unmodified)

$RUNS runs of each, client and server each in its own session.

| test | each run | median | of the raw ceiling |
| --- | --- | --- | --- |
| ib_write_bw -s 65536 -n 2000 | $WBW_ALL Gb/s | $WBW_G Gb/s | $(pct "$WBW_G" "$CEIL") |
| ib_send_bw -s 65536 -n 2000 | $SBW_ALL Gb/s | $SBW_G Gb/s | $(pct "$SBW_G" "$CEIL") |
| ib_write_lat -s 64 -n 2000 (t_typical) | $WLAT_ALL us | $WLAT_T us | lib/dp round trip above |

Engine counters of each run (client then server; METAROCE_ENGINE_STATS=1):

\`\`\`
$(cat "$ENG")
\`\`\`
EOF2
cat "$OUT"
