#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/rx_ring.sh: net_mrpkt's bandwidth against kernel TCP on one
# veth link (MTU 9000, two namespaces), back to back in the same minutes,
# for one or more builds (to compare two receive paths): per repetition
# iperf3 -t SECS, then for each build ib_write_bw and ib_send_bw 64 KiB
# -D SECS. Per run: Gb/s, the ratio to that repetition's iperf3, the
# receiving process's CPU time per received frame (utime + stime over its
# life, from /proc, divided by its rx_frames), its receive system calls
# per frame (rx_calls / rx_frames) and segments per super-frame
# (rx_gso_segs / rx_gso_frames), from its stats file; each side's CPU
# share (CPU seconds a second of its life, setup included), the sender's
# CPU time per sent packet, and the load.
# PERF_ARGS: more perftest options for both sides (e.g. "-x 1").
# Root. Usage: bench/wire/rx_ring.sh [REPS] [SECS] BUILD_DIR...
#   (REPS default 3, SECS default 5, BUILD_DIR default build)
set -u
cd "$(dirname "$0")/../.." || exit 1
REPS=${1:-3}
SECS=${2:-5}
shift 2 2>/dev/null
[ $# -gt 0 ] || set -- build
BUILDS=()
for b in "$@"; do
	BUILDS+=("$(cd "$b" 2>/dev/null && pwd)") ||
		{ echo "rx_ring.sh: no build directory $b" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "rx_ring.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need rx_ring.sh iperf3 ib_write_bw ib_send_bw python3
wire_link rx_ring.sh mrr
ip -n "$NSA" addr add 10.88.0.1/24 dev "$VA" &&
	ip -n "$NSB" addr add 10.88.0.2/24 dev "$VB" ||
	{ echo "rx_ring.sh: cannot address the link" >&2; exit 1; }
load() { cut -d' ' -f1 /proc/loadavg; }
TCK=$(getconf CLK_TCK)

# sample PID TAG: the process (or its child: metaroce-run may fork) with a
# stats file -> $W/sample.TAG: "cpu_s rx_frames rx_calls rx_gso_frames
# rx_gso_segs cpu_share tx_pkts" (cpu_share: CPU seconds per second of
# the process's life).
sample() {
	local i f
	for i in $(pgrep -P "$1") $1; do
		f=$(find "$W/run" -name "metaroce.stats.$i" 2>/dev/null | head -1)
		[ -n "$f" ] || continue
		python3 "$W/sample.py" "$f" "/proc/$i/stat" "$TCK" \
			>"$W/sample.new" 2>/dev/null &&
			mv "$W/sample.new" "$W/sample.$2"
	done
}
cat >"$W/sample.py" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
st = open(sys.argv[2]).read().rsplit(")", 1)[1].split()
hz = int(sys.argv[3])
cpu = (int(st[11]) + int(st[12])) / hz
up = float(open("/proc/uptime").read().split()[0])
life = up - int(st[19]) / hz
p = j["planes"]
s = lambda k: sum(x.get(k, 0) for x in p)
print(cpu, s("rx_frames"), s("rx_calls"), s("rx_gso_frames"),
      s("rx_gso_segs"), "%.2f" % (cpu / life if life > 0 else 0),
      s("tx_pkts"))
EOF

# run BUILD TOOL: one pair over net_mrpkt devices made with BUILD's
# metaroce-ctl; prints "Gb/s rx_cpu_us_per_frame rx_calls_per_frame
# segs_per_gso rx_cpu_share tx_cpu_us_per_packet tx_cpu_share".
run() {
	local b=$1 tool=$2 sp cp
	inA "$b/utils/metaroce-ctl" link del mrra >/dev/null 2>&1
	inB "$b/utils/metaroce-ctl" link del mrrb >/dev/null 2>&1
	inA "$b/utils/metaroce-ctl" link add mrra --port "net_mrpkt0,iface=$VA" \
		--ip 10.89.0.1/24 >/dev/null &&
		inB "$b/utils/metaroce-ctl" link add mrrb \
			--port "net_mrpkt0,iface=$VB" --ip 10.89.0.2/24 >/dev/null ||
		{ echo "rx_ring.sh: metaroce-ctl link add failed" >&2; return 1; }
	setsid ip netns exec "$NSB" timeout 60 "$b/utils/metaroce-run" "$tool" \
		-d mrrb -p 18700 -s 65536 -D "$SECS" -F ${PERF_ARGS:-} >"$W/srv" 2>&1 &
	sp=$!
	sleep 1
	setsid ip netns exec "$NSA" timeout 60 "$b/utils/metaroce-run" "$tool" \
		-d mrra -p 18700 -s 65536 -D "$SECS" -F ${PERF_ARGS:-} 10.88.0.2 >"$W/cli" 2>&1 &
	cp=$!
	# Each side's stats and CPU time until the server exits (the last
	# sample is kept: the stats file goes with the process).
	: >"$W/sample.srv"
	: >"$W/sample.cli"
	while kill -0 "$sp" 2>/dev/null; do
		sample "$sp" srv
		sample "$cp" cli
		sleep 0.5
	done
	wait "$cp"
	paste -d' ' "$W/sample.srv" "$W/sample.cli" | awk -v bw="$(awk '/^ *[0-9]+ +[0-9]+ /{l=$0} END {split(l, a); printf "%.2f", a[4] * 1048576 * 8 / 1e9}' "$W/cli")" \
		'{ printf "%s %.2f %.3f %.1f %.2f %.2f %.2f\n", bw, $2 ? $1 * 1e6 / $2 : 0, $2 ? $3 / $2 : 0, $4 ? $5 / $4 : 0, $6, $14 ? $8 * 1e6 / $14 : 0, $13; f = 1 }
		END { if (!f) print bw, "-", "-", "-", "-", "-", "-" }'
}

echo "rx_ring.sh $REPS $SECS $*: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPUs"
echo "| rep | build | test | Gb/s | iperf3 Gb/s | ratio | receiver CPU us/frame | rx calls/frame | segs/super-frame | receiver CPU share | sender CPU us/packet | sender CPU share | load |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for r in $(seq 1 "$REPS"); do
	inB iperf3 -s -D -1 >/dev/null 2>&1
	sleep 1
	TCP=$(inA iperf3 -c 10.88.0.2 -t "$SECS" -J 2>/dev/null |
		python3 -c 'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' 2>/dev/null)
	for b in "${BUILDS[@]}"; do
		for t in ib_write_bw ib_send_bw; do
			set -- $(run "$b" $t)
			echo "| $r | ${b##*/} | $t | ${1:--} | $TCP | $(awk -v a="${1:-0}" -v c="$TCP" 'BEGIN {if (a > 0 && c > 0) printf "%.2f", a / c; else print "-"}') | ${2:--} | ${3:--} | ${4:--} | ${5:--} | ${6:--} | ${7:--} | $(load) |"
		done
	done
done
