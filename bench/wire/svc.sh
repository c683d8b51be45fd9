#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/svc.sh: several applications per host through the datapath
# service (utils/metaroced) against one pair alone on direct af_packet
# ports, in ONE run on one veth link (MTU 9000, two namespaces):
#   - 1 ib_write_bw pair (64 KiB, -D SECS) on devices with their own
#     af_packet port (the anchor);
#   - 1, 4 and 8 pairs at once on devices whose ports are one metaroced
#     per host (port=service:SOCKET), the aggregate;
#   - the daemons' CPU time per frame they switched, from /proc.
# Writes OUT_DIR/svc.md (SVC_DEV=net_mrpkt0: the daemons' ports are
# lib/dp's own kernel-netdev port, svc_mrpkt.md). Root.
# Usage: [SVC_DEV=KIND] bench/wire/svc.sh [BUILD_DIR] [SECS]   (SECS 5)
set -u
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "svc.sh: no build directory ${1:-build}" >&2; exit 1; }
SECS=${2:-5}
OUT_DIR=${OUT_DIR:-$TOP/bench/wire}
mkdir -p "$OUT_DIR"
SVC_DEV=${SVC_DEV:-net_af_packet0}
CMD="bench/wire/svc.sh ${1:-build} $SECS"
OUT=svc.md
[ "$SVC_DEV" != net_af_packet0 ] && { CMD="SVC_DEV=$SVC_DEV $CMD"; OUT=svc_${SVC_DEV%0}.md; OUT=${OUT/net_/}; }
[ "$(id -u)" = 0 ] || { echo "svc.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need svc.sh ib_write_bw
wire_link svc.sh mrs
ip -n "$NSA" addr add 10.86.0.1/24 dev "$VA" &&
	ip -n "$NSB" addr add 10.86.0.2/24 dev "$VB" ||
	{ echo "svc.sh: cannot address the link" >&2; exit 1; }
load() { cut -d' ' -f1 /proc/loadavg; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a+0 > 0 && b+0 > 0) printf "%.2f", a / b; else print "-"}'; }

# Direct devices (their own af_packet port) and service devices (the
# daemon's), different addresses so each pair of devices is its own.
inA "$B/utils/metaroce-ctl" link add mrda --port "net_af_packet0,iface=$VA" \
	--ip 10.87.0.1/24 >/dev/null &&
	inB "$B/utils/metaroce-ctl" link add mrdb \
		--port "net_af_packet0,iface=$VB" --ip 10.87.0.2/24 >/dev/null &&
	inA "$B/utils/metaroce-ctl" link add mrsa --port "service:$W/a.sock" \
		--ip 10.88.0.1/24 --mac 02:00:0a:58:00:01 >/dev/null &&
	inB "$B/utils/metaroce-ctl" link add mrsb --port "service:$W/b.sock" \
		--ip 10.88.0.2/24 --mac 02:00:0a:58:00:02 >/dev/null ||
	{ echo "svc.sh: metaroce-ctl link add failed" >&2; exit 1; }
for s in a b; do
	n=1
	[ $s = b ] && n=2
	printf 'name=mrs%s\nport=%s,iface=%s\nip=10.88.0.%s/24\nmac=02:00:0a:58:00:0%s\nmtu=4096\nudp_port=4797\n' \
		$s "$SVC_DEV" "$([ $s = a ] && echo "$VA" || echo "$VB")" $n $n >"$W/$s.ports"
done

# CPU seconds of process $1 so far: user + system, user, system.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
cpu_u() { awk -v hz="$(getconf CLK_TCK)" '{print $14 / hz}' "/proc/$1/stat"; }

echo "== one pair, direct af_packet ports"
D1=$(wire_pairs 1 mrda mrdb "-x 1")
L1=$(load)

echo "== the service"
for s in a b; do
	ip netns exec "$([ $s = a ] && echo "$NSA" || echo "$NSB")" \
		"$B/utils/metaroced" --socket "$W/$s.sock" --stats "$W/$s.json" \
		"$W/$s.ports" >"$W/$s.daemon" 2>&1 &
	PIDS+=($!)
	eval "DP_$s=$!"
done
for i in $(seq 100); do
	grep -qs "serving" "$W/a.daemon" && grep -qs "serving" "$W/b.daemon" && break
	sleep 0.1
done
# run N: N pairs through the service; the aggregate (AGG[N]) and each
# daemon's CPU microseconds per frame it switched (CPU_US[N]).
declare -A CPU_US
run() {
	local n=$1 ca cb fa fb v ua ub
	ca=$(cpu_s "$DP_a")
	cb=$(cpu_s "$DP_b")
	ua=$(cpu_u "$DP_a")
	ub=$(cpu_u "$DP_b")
	sleep 1.1
	fa=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["rx_frames"])' "$W/a.json")
	fb=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["rx_frames"])' "$W/b.json")
	# The daemons' system calls by kind during the row (perf, when
	# there): per frame in the table below.
	if command -v perf >/dev/null; then
		perf stat -x, -o "$W/perf.$n" -e raw_syscalls:sys_enter \
			-e syscalls:sys_enter_sendto -e syscalls:sys_enter_write \
			-e syscalls:sys_enter_poll -e syscalls:sys_enter_read \
			-p "$DP_a,$DP_b" -- sleep $((SECS + 3)) 2>/dev/null &
		PERF=$!
	fi
	v=$(wire_pairs "$n" mrsa mrsb "-x 1")
	[ -n "${PERF:-}" ] && wait "$PERF"
	sleep 1.1
	CPU_US[$n]=$(python3 - "$W/a.json" "$W/b.json" "$fa" "$fb" "$ca" "$cb" "$(cpu_s "$DP_a")" "$(cpu_s "$DP_b")" "$ua" "$ub" "$(cpu_u "$DP_a")" "$(cpu_u "$DP_b")" "$W/moved.$n" <<'EOF'
import json, sys
SC = [0]
a, b = (json.load(open(f)) for f in sys.argv[1:3])
fa, fb, ca, cb, ca2, cb2, ua, ub, ua2, ub2 = map(float, sys.argv[3:13])
# Frames each daemon moved: received from its port (to applications)
# plus those the applications sent: the port's frames both ways.
# a's received are b's sent and the other way round, so a's frames are
# its rx + b's rx (this run).
ra, rb = a["rx_frames"] - fa, b["rx_frames"] - fb
moved = ra + rb
m = max(moved, 1)
SC[0] = moved
print("%.2f (user %.2f) / %.2f (user %.2f)" % ((ca2 - ca) * 1e6 / m,
      (ua2 - ua) * 1e6 / m, (cb2 - cb) * 1e6 / m, (ub2 - ub) * 1e6 / m))
open(sys.argv[13], "w").write("%d\n" % moved)
EOF
)
	AGG[$n]=$v
}
declare -A AGG
run 1
L2=$(load)
run 4
L3=$(load)
run 8
L4=$(load)
S1=${AGG[1]} S4=${AGG[4]} S8=${AGG[8]}
CA=$(cpu_s "$DP_a")
sleep 3
IDLE=$(awk -v a="$CA" -v b="$(cpu_s "$DP_a")" 'BEGIN {printf "%.1f", (b - a) / 3 * 100}')

{
	echo "# Several applications per host through metaroced"
	echo
	echo "Command: \`$CMD\` ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) vCPUs shared with other engineers' work)."
	echo "One veth link (MTU 9000) between two namespaces; ib_write_bw 64 KiB -D $SECS -x 1, N pairs at once; RoCE MTU 4096; the daemons' ports: $SVC_DEV."
	echo "Load = 1-minute load average right after the row (compare rows of this run only)."
	echo
	echo "Daemon CPU: microseconds of the daemon process (user + system, and user alone) per frame crossing the link in either direction during the row; the system part is the af_packet port's kernel work (sendto of the transmit kick, which on veth runs the peer's receive too), which an application on a direct port pays itself."
	echo
	echo "| configuration | aggregate | ratio to 1 pair direct | daemon CPU us per frame, A / B | load |"
	echo "| --- | --- | --- | --- | --- |"
	echo "| 1 pair, direct af_packet ports | $D1 Gb/s | 1.00 | - | $L1 |"
	echo "| 1 pair through metaroced | $S1 Gb/s | $(ratio "$S1" "$D1") | ${CPU_US[1]} | $L2 |"
	echo "| 4 pairs through metaroced | $S4 Gb/s | $(ratio "$S4" "$D1") | ${CPU_US[4]} | $L3 |"
	echo "| 8 pairs through metaroced | $S8 Gb/s | $(ratio "$S8" "$D1") | ${CPU_US[8]} | $L4 |"
	echo
	echo "Idle daemon (no application traffic, 3 s): ${IDLE}% of a core."
	if [ -s "$W/perf.1" ]; then
		echo
		echo "System calls of both daemons per frame crossing the link, 1 pair (perf stat, the row's window):"
		echo
		awk -F, -v m="$(cat "$W/moved.1")" '$3 ~ /sys_enter/ {n=$3; sub(/.*:/, "", n); sub(/sys_enter_?/, "", n); if (n == "") n = "all"; printf "    %s %.3f\n", n, $1 / (m > 0 ? m : 1)}' "$W/perf.1"
	fi
	echo
	echo "Daemon counters at the end:"
	echo
	echo "    A: $(cat "$W/a.json")"
	echo "    B: $(cat "$W/b.json")"
} >"$OUT_DIR/$OUT"
cat "$OUT_DIR/$OUT"
