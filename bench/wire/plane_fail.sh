#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# bench/wire/plane_fail.sh [BUILD_DIR [PLANES [RATE]]]: issue 9's wire target.
# Two hosts on a metaroce-fabric of PLANES planes (default 2; one leaf per
# plane, every link RATE, default 200mbit, below what the CPU can fill
# so the links are the bottleneck and a plane's share shows; queue 256k, CE above 64k), a
# MetaRoCE device with one port per plane on each, and an unmodified
# `ib_write_bw -D 10 -s 65536`. About three seconds into the transfer every
# link of plane 1 drops everything (`metaroce-fabric set
# 'pK/*' down_at=.. up_at=..`) for three seconds, then returns. The fabric's
# own per-link byte counters into the receiver are read every 2 ms
# (plane_fail.py sample: delivered, not offered) and plane_fail.py reports: the rate before, during and
# after, the time until the surviving planes carry 90% of their share
# ((k-1)/k of the rate before) in a 10 ms window and for good (200 ms), and
# the time until the failed plane carries traffic again (10 ms window, half
# its earlier share). Writes bench/wire/plane_fail.md and data/plane_fail*.csv.
# The device's ports are WIRE_PORT (default net_af_packet, the PMD; net_mrpkt:
# lib/dp's own port with UDP GSO, the default of `metaroce-ctl link add
# --port IFACE`); with net_mrpkt the files are plane_fail_mrpkt.md and
# data/plane_fail_mrpkt_*. Root; about 40 s.
cd "$(dirname "$0")/../.." || exit 1
TOP=$PWD
B=$(cd "${1:-build}" 2>/dev/null && pwd) || { echo "plane_fail.sh: no build directory ${1:-build}" >&2; exit 1; }
K=${2:-2}
RATE=${3:-200mbit}
# Each port's rate is the fabric's link rate, as a NIC of that rate
# reports it: the fabric's veths report none, and the 100 Gb/s the
# datapath then takes (MR-CC-11) is 500 x a 200mbit link, a window the
# 256k queues cannot hold before the first ECN mark comes back.
case $RATE in
*gbit) MBPS=$((${RATE%gbit} * 1000)) ;;
*mbit) MBPS=${RATE%mbit} ;;
*) echo "plane_fail.sh: RATE is NNmbit or NNgbit, not '$RATE'" >&2; exit 1 ;;
esac
SECS=10
WIRE_PORT=${WIRE_PORT:-net_af_packet}
case $WIRE_PORT in
net_af_packet) SUF= ;;
net_mrpkt) SUF=_mrpkt ;;
*) echo "plane_fail.sh: WIRE_PORT is net_af_packet or net_mrpkt, not '$WIRE_PORT'" >&2; exit 1 ;;
esac
OUT_DIR=${OUT_DIR:-$TOP/bench/wire}
mkdir -p "$OUT_DIR/data" && OUT_DIR=$(cd "$OUT_DIR" && pwd) || exit 1
DATA=$OUT_DIR/data
CTL=$B/utils/metaroce-ctl
RUN=$B/utils/metaroce-run
FAB=$B/utils/metaroce-fabric/metaroce-fabric
MOD=$TOP/utils/metaroce-fabric
SAMPLE=$TOP/bench/wire/fabric_sample.py
[ "$(id -u)" -eq 0 ] || { echo "plane_fail.sh: needs root" >&2; exit 1; }
[ -x "$FAB" ] || { echo "plane_fail.sh: no $FAB (build with clang)" >&2; exit 1; }
W=$(mktemp -d /tmp/pmfail.XXXXXX)
chmod 755 "$W"
export METAROCE_FABRIC_DIR=$W/fabric METAROCE_RUNDIR=$W/run
NAME=pmf$$
NAME=${NAME:0:8}
PIDS=()

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 -- "-$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for h in a b; do
		ip netns exec "$NAME-$h" "$CTL" link del mr0 >/dev/null 2>&1
	done
	"$FAB" -f "$NAME" down >/dev/null 2>&1
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

cat >"$W/f.conf" <<EOF
name $NAME
planes $K
host a leaf=1
host b leaf=1
link * rate=$RATE queue=256k ecn=64k
EOF
"$FAB" up "$W/f.conf" >&2 || exit 1
ports=""
links=""
for p in $(seq "$K"); do
	ports="$ports --port $WIRE_PORT$((p - 1)),iface=p$p"
	links="$links p$p/l1>a"
done
i=0
for h in a b; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	ip netns exec "$NAME-$h" "$CTL" link add mr0 $ports \
		--ip "10.200.0.$i/32" --opt link_mbps="$MBPS" >&2 || exit 1
done

# GID 1, the IPv4-mapped address: GID 0 has been the IPv6 link-local one
# since the GID table change, and with it the client's completion failed
# at once on this IPv4 fabric (0 bytes moved).
setsid ip netns exec "$NAME-a" timeout -k 5 $((SECS + 60)) "$RUN" \
	ib_write_bw -d mr0 -x 1 -F -s 65536 -D $SECS --report_gbits \
	>"$W/srv" 2>&1 &
PIDS+=($!)
for _ in $(seq 300); do
	ip netns exec "$NAME-a" ss -Hltn "sport = :18515" | grep -q . && break
	sleep 0.1
done
csv=$DATA/plane_fail${SUF}_timeline.csv
# shellcheck disable=SC2086
setsid python3 "$TOP/bench/wire/plane_fail.py" sample "$MOD" "$METAROCE_FABRIC_DIR/$NAME.json" \
	$((SECS + 14)) 0.002 $links >"$csv" &
PIDS+=($!)
spid=$!
# Plane 1 fails about 4 s from now for 3 s (MetaRoCE sprays every plane
# evenly, so any plane is as busy as another). The fabric tool takes a
# second or more to start on a loaded machine: it runs beside the client,
# and the window is what it recorded.
k=1
"$FAB" -f "$NAME" set "p$k/*" down_at=4 up_at=7 >/dev/null &
fpid=$!
setsid ip netns exec "$NAME-b" timeout -k 5 $((SECS + 60)) "$RUN" \
	ib_write_bw -d mr0 -x 1 -F -s 65536 -D $SECS --report_gbits \
	10.254.1.1 >"$W/cli" 2>&1 &
PIDS+=($!)
cpid=$!
wait "$fpid"
wait "$cpid"
crc=$?
cp "$METAROCE_FABRIC_DIR/$NAME.json" "$DATA/plane_fail${SUF}_fabric.json"
kill -- "-$spid" 2>/dev/null
wait "$spid" 2>/dev/null
if [ $crc -eq 0 ]; then
	how="exit 0, $(awk '$1 == 65536 && NF >= 4 {print $4 " Gb/s average over the 10 s"}' "$W/cli" | tail -1)"
else
	how="exit $crc: $(grep -m1 -iE 'error|fail' "$W/cli" | tr -d ',' | cut -c1-80)"
fi
r=$(python3 "$TOP/bench/wire/plane_fail.py" "$csv" \
	"$DATA/plane_fail${SUF}_fabric.json" "p$k/l1>a" "$k")
# The sender's counters (the client ran on host b): what the path
# manager did.
pm=$(ip netns exec "$NAME-b" "$CTL" stats mr0 --json --last 2>/dev/null |
	python3 -c 'import json,sys
d=json.load(sys.stdin)
def find(o):
    if isinstance(o, dict):
        if "planes_down" in o: return o
        for v in o.values():
            r = find(v)
            if r: return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r: return r
c=find(d) or {}
print(", ".join("%s %s" % (k, c.get(k, "?")) for k in ("path_suspects", "path_suspects_false", "tail_probes", "probes_sent", "paths_back", "planes_down", "planes_up", "timeouts", "retx_pkts")))' 2>/dev/null)
commit=$(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo ?)
{
	echo "# bench/wire/plane_fail: one plane of $K drops everything mid-transfer"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), commit $commit, $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)."
	pre=
	[ "$WIRE_PORT" = net_af_packet ] || pre="WIRE_PORT=$WIRE_PORT "
	echo "Command: \`${pre}bench/wire/plane_fail.sh build $K $RATE\` (root). Unmodified"
	echo "\`ib_write_bw -d mr0 -x 1 -F -s 65536 -D $SECS --report_gbits\` between two hosts of a"
	echo "metaroce-fabric of $K planes (host - leaf - host, every link $RATE, queue 256k, CE"
	echo "above 64k), one device port ($WIRE_PORT, link_mbps=$MBPS: the link's rate) per plane; plane $k down for 3 s from about 3 s"
	echo "after the client started (the window below), every link of it dropping everything. Rates from the"
	echo "packets the links into the receiver delivered (not dropped), read every 2 ms."
	echo
	echo "$r"
	echo
	echo "ib_write_bw: $how."
	echo
	echo "Sender's counters: $pm."
	echo
	echo "Timeline: data/plane_fail${SUF}_timeline.csv (t_s, bytes so far on each plane's link into the receiver)."
} >"$OUT_DIR/plane_fail$SUF.md"
cat "$OUT_DIR/plane_fail$SUF.md"
