#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/smallmsg.sh: the small-message rate (issue 13) on one veth link
# between two namespaces (bench/wire/link.sh), in one interleaved run:
#   - the kernel's UDP packet rate: iperf3 -u -b 0 -l 64 (received pkt/s);
#   - ib_write_bw -s 64 -D SECS -F and ib_send_bw -s 64 -D SECS -F
#     (msg/s), once per configuration given (an environment each, e.g.
#     "hold0|METAROCE_DP_TX_HOLD_US=0 METAROCE_ACK_REQ_DELAY_US=0"), the
#     configurations alternating within each repetition so that the load
#     of the shared machine falls on all of them alike;
#   - per run, from the datapath's stats files: the client's transmit system
#     calls per message and held frames per message, the server's ACKs per
#     message (engine tx_ack_pkts / msgs_rcvd) and the ACK requests whose
#     ACK waited for the messages behind them (ack_req_waits, MR-RSP-12);
#   - with LAT=1 (the default), what the same configurations cost a
#     ping-pong: ib_send_lat and ib_write_lat -s 64 -n LAT_N (2000),
#     typical and p99 us, in the same repetitions and order, so that a
#     knob is judged on rate and latency in one run.
# Prints a markdown table, one row per run, with the load (1-minute
# loadavg) at its end. Root. Ports: WIRE_PORT (default net_mrpkt0).
# Usage: bench/wire/smallmsg.sh [BUILD_DIR] [SECS] [REPS] [label|ENV...]...
#   (default: build 5 3 "default|" "off|METAROCE_DP_TX_HOLD_US=0
#    METAROCE_ACK_REQ_DELAY_US=0")
set -u
cd "$(dirname "$0")/../.." || exit 1
B=$(cd "${1:-build}" 2>/dev/null && pwd) || {
	echo "smallmsg.sh: no build directory ${1:-build}" >&2
	exit 1
}
SECS=${2:-5}
REPS=${3:-3}
shift $(($# < 3 ? $# : 3))
CONFS=("$@")
[ ${#CONFS[@]} -gt 0 ] ||
	CONFS=("default|" "off|METAROCE_DP_TX_HOLD_US=0 METAROCE_ACK_REQ_DELAY_US=0")
WIRE_PORT=${WIRE_PORT:-net_mrpkt0}
LAT=${LAT:-1}
LAT_N=${LAT_N:-2000}
[ "$(id -u)" = 0 ] || { echo "smallmsg.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need smallmsg.sh iperf3 ib_write_bw ib_send_bw python3
wire_link smallmsg.sh mrs
wire_addr smallmsg.sh 10.88.0
wire_devices smallmsg.sh "$B" "$WIRE_PORT" mrsa mrsb 10.89.0
load() { cut -d' ' -f1 /proc/loadavg; }

udp_pps() {
	inB iperf3 -s -D -1 >/dev/null 2>&1
	sleep 1
	inA iperf3 -c 10.88.0.2 -u -b 0 -l 64 -t "$SECS" -J 2>/dev/null |
		python3 -c 'import json,sys; e=json.load(sys.stdin)["end"]["sum"]; print("%.0f" % ((e["packets"] - e["lost_packets"]) / e["seconds"]))' 2>/dev/null
}

# The counters of one run from the stats files the two processes left:
# "tx_calls/msg held/msg acks/msg waits/msg" (client calls and held frames,
# server ACKs and ACK requests that waited, per message the server
# received).
counters() {
	python3 - "$W/run" <<'EOF'
import glob, json, os, sys
cli = srv = None
for f in glob.glob(os.path.join(sys.argv[1], "**", "metaroce.stats.*"),
                   recursive=True):
    try:
        j = json.load(open(f))
    except Exception:
        continue
    if j.get("device") == "mrsa":
        cli = j
    elif j.get("device") == "mrsb":
        srv = j
    os.unlink(f)
def plane(j, k):
    return sum(p.get(k, 0) for p in j.get("planes", [])) if j else 0
msgs = (srv or {}).get("engine", {}).get("msgs_rcvd", 0)
if not msgs:
    print("- - - -")
else:
    eng = srv.get("engine", {})
    print("%.2f %.2f %.2f %.2f" % (plane(cli, "tx_calls") / msgs,
                                   plane(cli, "tx_held") / msgs,
                                   eng.get("tx_ack_pkts", 0) / msgs,
                                   eng.get("ack_req_waits", 0) / msgs))
EOF
}

pair() { # TOOL PORT "OPTS" ENV...: one server/client pair, client's output in $W/cli
	local tool=$1 port=$2 opts=$3 sp cp
	shift 3
	# shellcheck disable=SC2086 # OPTS are perftest's words
	env "$@" setsid ip netns exec "$NSB" timeout 60 \
		"$B/utils/metaroce-run" "$tool" -d mrsb -p "$port" -s 64 \
		$opts -F >"$W/srv" 2>&1 &
	sp=$!
	sleep 1
	# shellcheck disable=SC2086
	env "$@" setsid ip netns exec "$NSA" timeout 60 \
		"$B/utils/metaroce-run" "$tool" -d mrsa -p "$port" -s 64 \
		$opts -F 10.88.0.2 >"$W/cli" 2>&1 &
	cp=$!
	wait "$cp"
	wait "$sp"
}

run() { # TOOL ENV... -> "msg/s calls/msg held/msg acks/msg waits/msg"
	local tool=$1 r
	shift
	pair "$tool" 18750 "-D $SECS" "$@"
	r=$(awk '/^ *[0-9]+ +[0-9]+ /{l=$0} END {print l}' "$W/cli" |
		awk 'NF >= 5 {printf "%.0f", $5 * 1e6}')
	echo "${r:--} $(counters)"
}

lat() { # TOOL ENV... -> "typical_us p99_us calls/msg held/msg acks/msg waits/msg"
	local tool=$1
	shift
	pair "$tool" 18751 "-n $LAT_N" "$@"
	# perftest: #bytes #iterations t_min t_max t_typical t_avg t_stdev p99
	echo "$(awk '/^ *[0-9]+ +[0-9]+ /{l=$0} END {split(l, f); if (f[5] != "") print f[5], f[8]; else print "- -"}' "$W/cli") $(counters)"
}

echo "command: LAT=$LAT bench/wire/smallmsg.sh ${B#"$PWD"/} $SECS $REPS$(printf ' "%s"' "${CONFS[@]}") (WIRE_PORT=$WIRE_PORT)"
echo
echo "| rep | what | config | rate or latency | x kernel UDP | client tx calls / msg | held / msg | server ACKs / msg | server ACK waits / msg | load |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for r in $(seq "$REPS"); do
	U=$(udp_pps)
	echo "| $r | kernel UDP 64 B (iperf3 -u -b 0 -l 64) | - | ${U:--} pkt/s | 1 | - | - | - | - | $(load) |"
	for tool in ib_write_bw ib_send_bw; do
		for c in "${CONFS[@]}"; do
			lab=${c%%|*}
			envs=${c#*|}
			# shellcheck disable=SC2086 # the configuration's words
			read -r rate calls held acks waits <<<"$(run "$tool" $envs)"
			ratio=$(awk -v a="$rate" -v b="${U:-0}" 'BEGIN {if (a+0 > 0 && b+0 > 0) printf "%.2f", a / b; else print "-"}')
			echo "| $r | $tool -s 64 -D $SECS | $lab | $rate msg/s | $ratio | $calls | $held | $acks | $waits | $(load) |"
		done
	done
	[ "$LAT" = 1 ] || continue
	for tool in ib_send_lat ib_write_lat; do
		for c in "${CONFS[@]}"; do
			lab=${c%%|*}
			envs=${c#*|}
			# shellcheck disable=SC2086 # the configuration's words
			read -r typ p99 calls held acks waits <<<"$(lat "$tool" $envs)"
			echo "| $r | $tool -s 64 -n $LAT_N | $lab | $typ us typical, p99 $p99 us | - | $calls | $held | $acks | $waits | $(load) |"
		done
	done
done
