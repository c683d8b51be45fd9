#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire: one veth link between two network namespaces, measured four
# ways, written to OUT_DIR/results.md with its data sets OUT_DIR/data/*.csv
# and the plots OUT_DIR/*.svg drawn from them by bench/wire/plot.sh:
#   1. the raw DPDK ceiling of the link: dpdk-testpmd txonly -> rxonly over
#      net_af_packet, 64 B frames and MetaRoCE MTU-4096 frames (4214 B);
#   2. kernel TCP: iperf3, one stream, 10 s;
#   3. lib/dp alone (tests/dp/mrdp-peer): one-way stream of 4214 B frames
#      and the 64 B round trip through both datapaths;
#   4. verbs over the whole stack (metaroce-ctl devices, perftest):
#      ib_write_bw and ib_send_bw at 64 KiB, ib_write_lat, ib_send_lat and
#      ib_read_lat at 64 B (RUNS times each), then one sweep of ib_write_bw
#      and ib_send_bw over message sizes.
# Root. Usage: bench/wire/run.sh [BUILD_DIR] [SECONDS]
# SECONDS (default 10) is the length of each testpmd and iperf3 run; below
# about 5, testpmd's own start takes the time and its rows stay empty.
# Environment:
#   RUNS=3            runs of each 64 KiB / 64 B perftest measurement
#   SWEEP="1024 ..."  message sizes of the sweep (default 2^10..2^20, each
#                     power of two); SWEEP= (empty) skips it
#   SWEEP_BYTES=N     bytes moved per sweep point (default 512 MiB; the
#                     iteration count is N / size within 20..20000)
#   OUT_DIR=dir       where results.md, data/ and the plots go (default
#                     bench/wire; a trial run elsewhere leaves the
#                     committed results alone)
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "run.sh: no build directory ${1:-build}" >&2; exit 1; }
SECS=${2:-10}
OUT_DIR=${OUT_DIR:-$TOP/bench/wire}
mkdir -p "$OUT_DIR/data" && OUT_DIR=$(cd "$OUT_DIR" && pwd) ||
	{ echo "run.sh: cannot create $OUT_DIR/data" >&2; exit 1; }
OUT=$OUT_DIR/results.md
DATA=$OUT_DIR/data
# Iterations of the 64 KiB bandwidth runs: 20000 x 64 KiB = 1.3 GB, about
# a second at the rates measured. Runs of 2000 (131 MB) measured 30-60%
# less: the first few hundred milliseconds of a run are slower (FINDINGS
# section 8); the ceiling is measured over SECONDS too.
BW_N=${BW_N:-20000}
SWEEP_DEF="1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576"
SWEEP=${SWEEP-$SWEEP_DEF}
SWEEP_BYTES=${SWEEP_BYTES:-536870912}
# The command that made the results, as written into them.
CMD="RUNS=${RUNS:-3}"
[ "$SWEEP" = "$SWEEP_DEF" ] || CMD="$CMD SWEEP=\"$SWEEP\""
[ "$SWEEP_BYTES" = 536870912 ] || CMD="$CMD SWEEP_BYTES=$SWEEP_BYTES"
CMD="$CMD bench/wire/run.sh ${1:-build} $SECS"
for v in $SWEEP $SWEEP_BYTES "$SECS" "${RUNS:-3}"; do
	case $v in
	'' | *[!0-9]* | 0) echo "run.sh: '$v' is not a positive integer" >&2; exit 1 ;;
	esac
done

[ "$(id -u)" = 0 ] || { echo "run.sh: needs root" >&2; exit 1; }
for f in utils/metaroce-ctl utils/metaroce-run tests/dp/mrdp-peer; do
	[ -x "$B/$f" ] || { echo "run.sh: $B/$f not built (ninja -C $B)" >&2; exit 1; }
done
. bench/wire/link.sh
wire_need run.sh dpdk-testpmd iperf3 ib_write_bw ib_send_bw ib_write_lat \
	ib_send_lat ib_read_lat gnuplot
wire_link run.sh mrw

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
# Statistics of a list of figures, "-" (a failed run) left out; "" if none.
ok() { echo $1 | tr ' ' '\n' | grep -v '^-$' | grep .; }
medof() { ok "$1" | med; }
minof() { ok "$1" | sort -n | head -1; }
maxof() { ok "$1" | sort -n | tail -1; }
cnt() { ok "$1" | wc -l; }
nan() { case $1 in '' | - | failed) echo NaN ;; *) echo "$1" ;; esac; }
bwrun() { # tool size iterations -> average bandwidth in Gb/s, or "-"
	local l
	l=$(perf "$1" -s "$2" -n "$3" -F)
	mbs2gbps "$(echo "$l" | awk 'NF >= 5 {print $4}')"
}
# ib_*_lat: #bytes #iter t_min t_max t_typical t_avg t_stdev 99% 99.9%
# (us; ib_write_lat and ib_send_lat print half the round trip, ib_read_lat
# the whole one, as perftest does for every device).
latrun() { # tool -> "t_min t_typical p99", or "- - -"
	perf "$1" -s 64 -n 2000 -F |
		awk 'NF >= 9 {print $3, $5, $8; f = 1} END {if (!f) print "- - -"}'
}
LATS="ib_write_lat ib_send_lat ib_read_lat"
declare -A LMIN LTYP LP99
WBW_ALL=
SBW_ALL=
for r in $(seq "$RUNS"); do
	echo "== verbs run $r"
	WBW_ALL="$WBW_ALL $(bwrun ib_write_bw 65536 "$BW_N")"
	SBW_ALL="$SBW_ALL $(bwrun ib_send_bw 65536 "$BW_N")"
	for t in $LATS; do
		read -r a b c <<<"$(latrun $t)"
		LMIN[$t]="${LMIN[$t]:-} $a"
		LTYP[$t]="${LTYP[$t]:-} $b"
		LP99[$t]="${LP99[$t]:-} $c"
	done
done
WBW_G=$(medof "$WBW_ALL")
SBW_G=$(medof "$SBW_ALL")

# One sweep over message sizes: the same bytes per point, so each point
# takes about as long as the link allows.
ENG_MAIN=$ENG
ENG=$W/engine_sweep.txt
: >"$ENG"
if [ -n "$SWEEP" ]; then
	echo "bytes,iterations,ib_write_bw_gbps,ib_send_bw_gbps" >"$DATA/sweep.csv"
	for sz in $SWEEP; do
		n=$((SWEEP_BYTES / sz))
		[ $n -lt 20 ] && n=20
		[ $n -gt 20000 ] && n=20000
		echo "== sweep $sz B x $n"
		w=$(bwrun ib_write_bw "$sz" "$n")
		sd=$(bwrun ib_send_bw "$sz" "$n")
		echo "$sz,$n,$(nan "$w"),$(nan "$sd")" >>"$DATA/sweep.csv"
	done
else
	rm -f "$DATA/sweep.csv" "$OUT_DIR/sweep.svg"
fi
sumc() { grep -o "$1=[0-9]*" "$ENG" | awk -F= '{s += $2} END {print s + 0}'; }
SW_RETX=$(sumc retx_pkts)
SW_TMO=$(sumc timeouts)
ENG=$ENG_MAIN

# No per-second rate above 100 pps: testpmd did not run long enough after
# its start (a SECONDS of a few) or failed; say so rather than plot 0.
CEIL=
[ "${P4K:-0}" -gt 0 ] 2>/dev/null && CEIL=$(gbps "$P4K" 4214)
pct() { awk -v a="$1" -v b="$2" 'BEGIN {if (a+0 > 0 && b+0 > 0) printf "%.0f%%", 100 * a / b; else print "-"}'; }
# lib/dp's stream: the sender's rate times the share the receiver got.
DP_N=200000
DP_G=$(echo "$DP_STREAM" | grep -o '[0-9.]* Gb/s' | awk '{print $1}')
DP_DELIV=$(awk -v g="$DP_G" -v r="$DP_RECV" -v n=$DP_N \
	'BEGIN {if (g != "" && r != "") printf "%.2f", g * r / n}')
DP_P50=$(echo "$DP_RTT" | grep -o 'p50 [0-9.]*' | awk '{print $2}')
DP_P99=$(echo "$DP_RTT" | grep -o 'p99 [0-9.]*' | awk '{print $2}')
half() { awk -v v="$1" 'BEGIN {if (v == "") print ""; else printf "%.2f", v / 2}'; }

# The data sets the plots are drawn from (bench/wire/plot.sh).
DIRTY=$(git -C "$TOP" status --porcelain -- lib providers utils kernel-abi 2>/dev/null | wc -l)
{
	echo "key,value"
	echo "date,$(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "commit,$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)$([ "$DIRTY" = 0 ] || echo +dirty)"
	echo "machine,$(nproc) vCPU $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo | awk '{print $1, $2}')"
	echo "command,$CMD"
	echo "load,$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "ceiling_gbps,$(nan "$CEIL")"
} >"$DATA/meta.csv"
{
	echo "what,gbps,gbps_min,gbps_max,runs,how"
	echo "testpmd ceiling,$(nan "$CEIL"),$(nan "$CEIL"),$(nan "$CEIL"),1,4214 B frames"
	echo "kernel TCP (iperf3),$(nan "$TCP"),$(nan "$TCP"),$(nan "$TCP"),1,1 stream"
	echo "lib/dp alone,$(nan "$DP_DELIV"),$(nan "$DP_DELIV"),$(nan "$DP_DELIV"),1,4214 B frames received"
	echo "ib_write_bw,$(nan "$WBW_G"),$(nan "$(minof "$WBW_ALL")"),$(nan "$(maxof "$WBW_ALL")"),$(cnt "$WBW_ALL"),-s 65536 -n $BW_N"
	echo "ib_send_bw,$(nan "$SBW_G"),$(nan "$(minof "$SBW_ALL")"),$(nan "$(maxof "$SBW_ALL")"),$(cnt "$SBW_ALL"),-s 65536 -n $BW_N"
} >"$DATA/bw64k.csv"
{
	echo "what,basis,t_min_us,t_typical_us,p99_us,runs"
	for t in $LATS; do
		b="RTT/2"
		[ $t = ib_read_lat ] && b=RTT
		echo "$t,$b,$(nan "$(medof "${LMIN[$t]}")"),$(nan "$(medof "${LTYP[$t]}")"),$(nan "$(medof "${LP99[$t]}")"),$(cnt "${LTYP[$t]}")"
	done
	echo "lib/dp round trip,RTT,NaN,$(nan "$DP_P50"),$(nan "$DP_P99"),1"
	echo "lib/dp round trip / 2,RTT/2,NaN,$(nan "$(half "$DP_P50")"),$(nan "$(half "$DP_P99")"),1"
} >"$DATA/lat64.csv"

latrow() { # tool -> a table row of the latency table
	local t=$1
	echo "| $t -s 64 -n 2000 | $([ $t = ib_read_lat ] && echo RTT || echo RTT/2) | ${LMIN[$t]} | ${LTYP[$t]} | ${LP99[$t]} | $(medof "${LMIN[$t]}") / $(medof "${LTYP[$t]}") / $(medof "${LP99[$t]}") |"
}

cat >"$OUT" <<EOF2
# bench/wire results

One veth pair (MTU 9000) between two network namespaces, one run,
$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPUs, load average at the end:
$(cut -d' ' -f1-3 /proc/loadavg) (other work shares this machine: the
figures move 10-40% between runs and are far below an idle machine's when
the load is high). Command: \`$CMD\`.
Source: $(git -C "$TOP" log -1 --format='%h %s' 2>/dev/null | cut -c1-70)$([ "$DIRTY" = 0 ] || echo " (plus $DIRTY uncommitted files under lib, providers, utils)").

![64 KiB bandwidth against the raw ceiling and kernel TCP](bw64k.svg)

## Raw ceiling of the link and kernel TCP

| what | 64 B frames | 4214 B frames (MetaRoCE MTU 4096) |
| --- | --- | --- |
| dpdk-testpmd txonly -> rxonly, net_af_packet | $P64 pps | $P4K pps = ${CEIL:-(not measured)} Gb/s |
| kernel TCP, iperf3, 1 stream | - | $TCP Gb/s |

## lib/dp alone (tests/dp/mrdp-peer, no protocol engine)

| what | result |
| --- | --- |
| one-way stream of 4214 B frames (sender side) | $DP_STREAM |
| of which the receiver got | $DP_RECV of $DP_N packets ($DP_DELIV Gb/s delivered) |
| 64 B round trip through both datapaths | $DP_RTT |
| idle device, whole process | $DP_IDLE |

## Verbs over the whole stack (perftest, unmodified)

$RUNS runs of each, client and server each in its own session.

| test | each run | median | of the raw ceiling |
| --- | --- | --- | --- |
| ib_write_bw -s 65536 -n $BW_N | $WBW_ALL Gb/s | $WBW_G Gb/s | $(pct "$WBW_G" "$CEIL") |
| ib_send_bw -s 65536 -n $BW_N | $SBW_ALL Gb/s | $SBW_G Gb/s | $(pct "$SBW_G" "$CEIL") |

Latency at 64 B, us, as perftest prints it: ib_write_lat and ib_send_lat
report half the round trip (RTT/2), ib_read_lat the whole one (RTT). The
lib/dp round trip above is a whole one (p50 $DP_P50 us, p99 $DP_P99 us).

| test | basis | t_min each run | t_typical each run | p99 each run | median t_min / t_typical / p99 |
| --- | --- | --- | --- | --- | --- |
$(for t in $LATS; do latrow $t; done)

![64 B latency of the verbs against the lib/dp round trip](lat64.svg)
EOF2
if [ -n "$SWEEP" ]; then
	cat >>"$OUT" <<EOF2

## Bandwidth over message sizes (one sweep)

ib_write_bw and ib_send_bw, \`-s SIZE -n N\` with N = $SWEEP_BYTES / SIZE
within 20..20000; Gb/s of perftest's average. Retransmitted packets
during the whole sweep: $SW_RETX, retransmission timeouts: $SW_TMO.

| bytes | iterations | ib_write_bw Gb/s | ib_send_bw Gb/s |
| ---: | ---: | ---: | ---: |
$(tail -n +2 "$DATA/sweep.csv" | awk -F, '{printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4}')

![bandwidth over message sizes against the raw ceiling](sweep.svg)
EOF2
fi
cat >>"$OUT" <<EOF2

The plots are drawn from data/*.csv by \`bench/wire/plot.sh\` (re-run it
alone to re-plot: \`bench/wire/plot.sh [DIR]\`).

Engine counters of each run (client then server; METAROCE_ENGINE_STATS=1):

\`\`\`
$(cat "$ENG")
\`\`\`
EOF2
bash "$TOP/bench/wire/plot.sh" "$OUT_DIR" || echo "run.sh: plotting failed" >&2
cat "$OUT"
