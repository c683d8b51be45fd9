#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/targets.sh: issue 13's targets in ONE run on one veth link
# (MTU 9000, two namespaces, af_packet ports), each figure next to its
# kernel/DPDK anchor measured in the same minutes, the load with each:
#   - ceiling: dpdk-testpmd txonly -> rxonly, 4214 B frames; kernel TCP:
#     iperf3 one stream; kernel UDP packet rate: iperf3 -u -l 64;
#     kernel latency: qperf udp_lat / tcp_lat;
#   - ib_write_bw / ib_send_bw 64 KiB with perftest's default iteration
#     count and with -D SECS; ib_read_bw; ib_write_bw -n 200;
#   - ib_send_lat / ib_write_lat / ib_read_lat 64 B typical and p99;
#     qperf rc_lat;
#   - ib_write_bw -s 64 and ib_send_bw -s 64 message rates;
#   - 1, 4 and 8 ib_write_bw pairs sharing the devices (aggregate), with
#     steering (default) and without (dp_steer=no), and in rx=block;
#   - the same bandwidth rows over DPDK's af_packet PMD (a second pair of
#     devices on the same link), for the port kind's share of the figure.
# The devices' port kind is WIRE_PORT (default net_mrpkt0: lib/dp's own
# AF_PACKET port with UDP GSO, docs/architecture.md; net_af_packet0 the
# PMD). Writes OUT_DIR/targets.md (OUT_FILE to name it otherwise). Root.
# Usage: bench/wire/targets.sh [BUILD_DIR] [SECS]   (SECS default 5)
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "targets.sh: no build directory ${1:-build}" >&2; exit 1; }
SECS=${2:-5}
OUT_DIR=${OUT_DIR:-$TOP/bench/wire}
mkdir -p "$OUT_DIR"
WIRE_PORT=${WIRE_PORT:-net_mrpkt0}
CMD="bench/wire/targets.sh ${1:-build} $SECS"
[ "$WIRE_PORT" = net_mrpkt0 ] || CMD="WIRE_PORT=$WIRE_PORT $CMD"
[ "$(id -u)" = 0 ] || { echo "targets.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need targets.sh dpdk-testpmd iperf3 qperf ib_write_bw ib_send_bw \
	ib_read_bw ib_write_lat ib_send_lat ib_read_lat
wire_link targets.sh mrt
ip -n "$NSA" addr add 10.86.0.1/24 dev "$VA" &&
	ip -n "$NSB" addr add 10.86.0.2/24 dev "$VB" ||
	{ echo "targets.sh: cannot address the link" >&2; exit 1; }
load() { cut -d' ' -f1 /proc/loadavg; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a+0 > 0 && b+0 > 0) printf "%.2f", a / b; else print "-"}'; }

# --- anchors -------------------------------------------------------------
testpmd_gbps() {
	awk -v p="$(testpmd_rate 4214)" 'BEGIN {printf "%.2f", p * 4214 * 8 / 1e9}'
}
echo "== anchors"
CEIL=$(testpmd_gbps)
L_CEIL=$(load)
inB iperf3 -s -D -1 >/dev/null 2>&1
sleep 1
TCP=$(inA iperf3 -c 10.86.0.2 -t "$SECS" -J 2>/dev/null |
	python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' 2>/dev/null)
L_TCP=$(load)
inB iperf3 -s -D -1 >/dev/null 2>&1
sleep 1
UDPPPS=$(inA iperf3 -c 10.86.0.2 -u -b 0 -l 64 -t "$SECS" -J 2>/dev/null |
	python3 -c 'import json,sys; e=json.load(sys.stdin)["end"]["sum"]; print("%.0f" % ((e["packets"] - e["lost_packets"]) / e["seconds"]))' 2>/dev/null)
L_UDP=$(load)
inB qperf -lp 19877 >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
qp() { inA qperf -lp 19877 -t "$SECS" -m 64 10.86.0.2 "$1" 2>/dev/null |
	awk '/latency/ {v=$3; u=$4; if (u == "ms") v *= 1000; if (u == "ns") v /= 1000; print v}'; }
UDPLAT=$(qp udp_lat)
TCPLAT=$(qp tcp_lat)
L_LAT=$(load)
kill "${PIDS[-1]}" 2>/dev/null

# --- the devices ------------------------------------------------------------
wire_devices targets.sh "$B" "$WIRE_PORT" mrta mrtb 10.87.0
wire_devices targets.sh "$B" net_af_packet0 mrtc mrtd 10.87.1 \
	02:00:0a:57:01:01 02:00:0a:57:01:02
# mrte / mrtf: the same port kind in rx=block (a wake-up per 256 KiB block,
# FINDINGS 20), for the several-processes rows; only net_mrpkt has it.
BLK=
case $WIRE_PORT in
net_mrpkt*)
	wire_devices targets.sh "$B" "$WIRE_PORT,rx=block" mrte mrtf 10.87.2 \
		02:00:0a:57:02:01 02:00:0a:57:02:02
	BLK=1
	;;
esac
# DEVA / DEVB: the devices a pair uses (mrta / mrtb; mrtc / mrtd: the PMD).
# pair K TOOL ARGS...: the K-th pair (TCP port 18600+K), each side in its
# own session (autogroup: as on two hosts); output in $W/cli.K.
pair_start() {
	local k=$1 tool=$2
	shift 2
	setsid ip netns exec "$NSB" timeout 120 "$B/utils/metaroce-run" "$tool" \
		-d "${DEVB:-mrtb}" -p $((18600 + k)) "$@" >"$W/srv.$k" 2>&1 &
	SP[$k]=$!
}
pair_cli() {
	local k=$1 tool=$2
	shift 2
	setsid ip netns exec "$NSA" timeout 120 "$B/utils/metaroce-run" "$tool" \
		-d "${DEVA:-mrta}" -p $((18600 + k)) "$@" 10.86.0.2 >"$W/cli.$k" 2>&1 &
	CP[$k]=$!
}
declare -a SP CP
one() { # TOOL ARGS... -> the client's result line
	pair_start 0 "$@"
	sleep 1
	pair_cli 0 "$@"
	wait "${CP[0]}"
	wait "${SP[0]}"
	awk '/^ *[0-9]+ +[0-9]+ /{l=$0} END {print l}' "$W/cli.0"
}
bw() { one "$@" -F | awk 'NF >= 5 {printf "%.2f", $4 * 1048576 * 8 / 1e9}'; }
mrate() { one "$@" -F | awk 'NF >= 5 {printf "%.0f", $5 * 1e6}'; }
lat() { one "$@" -F | awk 'NF >= 9 {print $5, $8}'; }

echo "== bandwidth"
W_DEF=$(bw ib_write_bw -s 65536)
L1=$(load)
W_D=$(bw ib_write_bw -s 65536 -D "$SECS")
L2=$(load)
W_200=$(bw ib_write_bw -s 65536 -n 200)
L3=$(load)
S_DEF=$(bw ib_send_bw -s 65536)
L4=$(load)
S_D=$(bw ib_send_bw -s 65536 -D "$SECS")
L5=$(load)
R_DEF=$(bw ib_read_bw -s 65536)
L6=$(load)
echo "== bandwidth over the af_packet PMD"
export DEVA=mrtc DEVB=mrtd
P_WDEF=$(bw ib_write_bw -s 65536)
P_WD=$(bw ib_write_bw -s 65536 -D "$SECS")
P_SDEF=$(bw ib_send_bw -s 65536)
P_SD=$(bw ib_send_bw -s 65536 -D "$SECS")
L6P=$(load)
unset DEVA DEVB
echo "== latency"
read -r WL_T WL_P <<<"$(lat ib_write_lat -s 64 -n 2000)"
L7=$(load)
read -r SL_T SL_P <<<"$(lat ib_send_lat -s 64 -n 2000)"
L8=$(load)
read -r RL_T RL_P <<<"$(lat ib_read_lat -s 64 -n 2000)"
L9=$(load)
inB "$B/utils/metaroce-run" qperf -lp 19878 >/dev/null 2>&1 &
PIDS+=($!)
sleep 1
# qperf's own output is kept: a run that prints no latency says why there.
# -li / -ri: qperf opens the first device of the list otherwise (mrta and
# mrtb since the list is in name order, FINDINGS 16.1; named anyway).
inA "$B/utils/metaroce-run" qperf -lp 19878 -t "$SECS" -m 64 -li mrta -ri mrtb \
	10.86.0.2 rc_lat >"$W/rc_lat.out" 2>&1
RCLAT=$(awk '/latency/ {v=$3; u=$4; if (u == "ms") v *= 1000; if (u == "ns") v /= 1000; print v}' "$W/rc_lat.out")
[ -n "$RCLAT" ] || { echo "targets.sh: qperf rc_lat gave no figure:" >&2; cat "$W/rc_lat.out" >&2; }
L10=$(load)
kill "${PIDS[-1]}" 2>/dev/null
echo "== message rate"
WR64=$(mrate ib_write_bw -s 64 -D "$SECS")
SR64=$(mrate ib_send_bw -s 64 -D "$SECS")
L11=$(load)

echo "== several processes per host"
A1=$(wire_pairs 1 mrta mrtb "")
A4=$(wire_pairs 4 mrta mrtb "")
L12=$(load)
A4N=$(wire_pairs 4 mrta mrtb "" METAROCE_DP_STEER=0)
A8=$(wire_pairs 8 mrta mrtb "")
L13=$(load)
if [ -n "$BLK" ]; then
	B1=$(wire_pairs 1 mrte mrtf "")
	B4=$(wire_pairs 4 mrte mrtf "")
	B8=$(wire_pairs 8 mrte mrtf "")
	L14=$(load)
fi

echo
DIRTY=$(git -C "$TOP" status --porcelain -- lib providers utils 2>/dev/null | wc -l)
{
	echo "# bench/wire: issue 13's targets in one run"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPUs, one veth pair (MTU 9000), $WIRE_PORT ports (the af_packet PMD rows: net_af_packet0)."
	echo "Command: \`$CMD\`. Source: $(git -C "$TOP" log -1 --format='%h %s' | cut -c1-60)$([ "$DIRTY" = 0 ] || echo " (+$DIRTY uncommitted files)")."
	echo "Load = 1-minute load average right after the row's measurement (other engineers' builds and tests share the 2 vCPUs: compare rows of this run only)."
	echo
	echo "| what | MetaRoCE | anchor (same run) | ratio | load |"
	echo "| --- | --- | --- | --- | --- |"
	echo "| raw DPDK ceiling, testpmd 4214 B | - | $CEIL Gb/s | - | $L_CEIL |"
	echo "| kernel TCP, iperf3 1 stream | - | $TCP Gb/s | - | $L_TCP |"
	echo "| ib_write_bw 64 KiB, perftest default (-n 5000) | $W_DEF Gb/s | iperf3 $TCP / testpmd $CEIL | $(ratio "$W_DEF" "$TCP") / $(ratio "$W_DEF" "$CEIL") | $L1 |"
	echo "| ib_write_bw 64 KiB -D $SECS | $W_D Gb/s | iperf3 $TCP / testpmd $CEIL | $(ratio "$W_D" "$TCP") / $(ratio "$W_D" "$CEIL") | $L2 |"
	echo "| ib_write_bw 64 KiB -n 200 | $W_200 Gb/s | -D $SECS: $W_D | $(ratio "$W_200" "$W_D") | $L3 |"
	echo "| ib_send_bw 64 KiB, default | $S_DEF Gb/s | iperf3 $TCP / testpmd $CEIL | $(ratio "$S_DEF" "$TCP") / $(ratio "$S_DEF" "$CEIL") | $L4 |"
	echo "| ib_send_bw 64 KiB -D $SECS | $S_D Gb/s | iperf3 $TCP / testpmd $CEIL | $(ratio "$S_D" "$TCP") / $(ratio "$S_D" "$CEIL") | $L5 |"
	echo "| ib_read_bw 64 KiB, default | $R_DEF Gb/s | ib_write_bw default $W_DEF | $(ratio "$R_DEF" "$W_DEF") | $L6 |"
	echo "| ib_write_bw 64 KiB default, af_packet PMD | $P_WDEF Gb/s | iperf3 $TCP / $WIRE_PORT $W_DEF | $(ratio "$P_WDEF" "$TCP") / $(ratio "$P_WDEF" "$W_DEF") | $L6P |"
	echo "| ib_write_bw 64 KiB -D $SECS, af_packet PMD | $P_WD Gb/s | iperf3 $TCP / $WIRE_PORT $W_D | $(ratio "$P_WD" "$TCP") / $(ratio "$P_WD" "$W_D") | $L6P |"
	echo "| ib_send_bw 64 KiB default, af_packet PMD | $P_SDEF Gb/s | iperf3 $TCP / $WIRE_PORT $S_DEF | $(ratio "$P_SDEF" "$TCP") / $(ratio "$P_SDEF" "$S_DEF") | $L6P |"
	echo "| ib_send_bw 64 KiB -D $SECS, af_packet PMD | $P_SD Gb/s | iperf3 $TCP / $WIRE_PORT $S_D | $(ratio "$P_SD" "$TCP") / $(ratio "$P_SD" "$S_D") | $L6P |"
	echo "| ib_write_lat 64 B typical / p99 (us, RTT/2) | $WL_T / $WL_P | qperf udp_lat $UDPLAT (tcp_lat $TCPLAT) | $(ratio "$WL_T" "$UDPLAT") / p99:typ $(ratio "$WL_P" "$WL_T") | $L7 |"
	echo "| ib_send_lat 64 B typical / p99 (us, RTT/2) | $SL_T / $SL_P | qperf udp_lat $UDPLAT | $(ratio "$SL_T" "$UDPLAT") / p99:typ $(ratio "$SL_P" "$SL_T") | $L8 |"
	echo "| ib_read_lat 64 B typical / p99 (us, RTT) | $RL_T / $RL_P | qperf udp_lat $UDPLAT | $(ratio "$RL_T" "$UDPLAT") / p99:typ $(ratio "$RL_P" "$RL_T") | $L9 |"
	echo "| qperf rc_lat 64 B (us) | $RCLAT | qperf udp_lat $UDPLAT | $(ratio "$RCLAT" "$UDPLAT") | $L10 |"
	echo "| ib_write_bw -s 64 -D $SECS (msg/s) | $WR64 | kernel UDP 64 B $UDPPPS pkt/s | $(ratio "$WR64" "$UDPPPS") | $L11 |"
	echo "| ib_send_bw -s 64 -D $SECS (msg/s) | $SR64 | kernel UDP 64 B $UDPPPS pkt/s | $(ratio "$SR64" "$UDPPPS") | $L11 |"
	echo "| 1 ib_write_bw pair, 64 KiB -D $SECS | $A1 Gb/s | - | - | $L12 |"
	echo "| 4 pairs on the same devices, aggregate, steered | $A4 Gb/s | 1 pair $A1 | $(ratio "$A4" "$A1") | $L12 |"
	echo "| 4 pairs, aggregate, dp_steer=no | $A4N Gb/s | 1 pair $A1 | $(ratio "$A4N" "$A1") | $L13 |"
	echo "| 8 pairs, aggregate, steered | $A8 Gb/s | 1 pair $A1 | $(ratio "$A8" "$A1") | $L13 |"
	if [ -n "$BLK" ]; then
		echo "| 1 pair, rx=block | $B1 Gb/s | 1 pair rx=frame $A1 | $(ratio "$B1" "$A1") | $L14 |"
		echo "| 4 pairs, aggregate, steered, rx=block | $B4 Gb/s | 1 pair rx=block $B1 / rx=frame $A1 | $(ratio "$B4" "$B1") / $(ratio "$B4" "$A1") | $L14 |"
		echo "| 8 pairs, aggregate, steered, rx=block | $B8 Gb/s | 1 pair rx=block $B1 / rx=frame $A1 | $(ratio "$B8" "$B1") / $(ratio "$B8" "$A1") | $L14 |"
	fi
} >"$OUT_DIR/${OUT_FILE:-targets.md}"
cat "$OUT_DIR/${OUT_FILE:-targets.md}"
