#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# metaroce-ctl paths against a live connection: two hosts (network
# namespaces) joined by two veth pairs, a device of two planes in each
# with 6 paths per connection, and ib_write_bw running for a few seconds.
# While it runs, the sender's paths must be real: one connection per side,
# 6 paths, path i on plane i % 2, distinct UDP source ports of the dynamic
# range, every path sending, RTTs (min <= smoothed) non-zero and in
# flight within the window after traffic; --json parses with python3's
# json; --watch repeats; the text table names every path; bad options
# get one usage error.
#
# Usage: paths.sh CTL RUN
set -u
CTL=${1:?usage: paths.sh CTL RUN}
RUN=${2:?usage}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, veth, /dev nodes)"
	exit 77
fi

TAG=$$
NSA=pkgA$TAG
NSB=pkgB$TAG
VA=pkgva$TAG
VB=pkgvb$TAG
TCP_A=10.86.0.1
DEV_A=pkga
DEV_B=pkgb
NPATHS=6
# shellcheck source=tests/integration/hosts.sh
. "$(dirname "$0")/hosts.sh"
hosts_init pkg-paths
T=${MRI_TIMEOUT:-60}

NS_MADE=1
ip netns add "$NSA" || die "ip netns add $NSA"
ip netns add "$NSB" || die "ip netns add $NSB"
for i in 0 1; do
	ip link add "$VA$i" netns "$NSA" type veth peer name "$VB$i" \
		netns "$NSB" || die "veth $i"
	ip -n "$NSA" link set "$VA$i" mtu 9000 up &&
		ip -n "$NSB" link set "$VB$i" mtu 9000 up || die "link up"
done
ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up || die "lo up"
ip -n "$NSA" addr add $TCP_A/24 dev "${VA}0" || die "addr"
ip -n "$NSB" addr add 10.86.0.2/24 dev "${VB}0" || die "addr"
for n in A B; do
	ns=NS$n
	v=V$n
	d=DEV_$n
	ip netns exec "${!ns}" "$CTL" link add "${!d}" \
		--port "net_af_packet0,iface=${!v}0" \
		--port "net_af_packet1,iface=${!v}1" \
		--ip "10.87.0.$([ $n = A ] && echo 1 || echo 2)/24" \
		--opt paths=$NPATHS >"$W/ctl.log" 2>&1 ||
		die "link add $n: $(cat "$W/ctl.log")"
done

# Nothing runs yet: the one error stats gives too.
inB "$CTL" paths $DEV_B >"$W/none.out" 2>&1 && die "paths of an idle device succeeded"
grep -q "is not in use" "$W/none.out" || die "idle device: $(cat "$W/none.out")"
echo "ok: idle device: $(cat "$W/none.out")"

# Usage errors: exit 2, one line each.
for bad in "--watch=0" "--watch=x" "--nope" "--watch --last"; do
	# shellcheck disable=SC2086
	inB "$CTL" paths $DEV_B $bad >"$W/bad.out" 2>&1
	rc=$?
	[ $rc = 2 ] && [ "$(wc -l <"$W/bad.out")" = 1 ] ||
		die "paths $bad: exit $rc, $(cat "$W/bad.out")"
done
inB "$CTL" paths >/dev/null 2>&1
[ $? = 2 ] || die "paths without NAME: not a usage error"
echo "ok: usage errors"

# The transfer: 20 s of 64 KiB WRITEs (perftest's duration mode); the
# checks below take a few seconds of it.
bg_in "$NSA" "$W/srv.log" timeout -k 5 "$T" "$RUN" ib_write_bw -d $DEV_A \
	-x 0 -F -s 65536 -D 20
SPID=$BG_PID
for _ in $(seq 100); do
	inA ss -Hltn "sport = :18515" 2>/dev/null | grep -q . && break
	sleep 0.1
done
bg_in "$NSB" "$W/cli.log" timeout -k 5 "$T" "$RUN" ib_write_bw -d $DEV_B \
	-x 0 -F -s 65536 -D 20 $TCP_A
CPID=$BG_PID

# Wait until the sender's file shows a connection that has RTT samples
# on every path (written once a second), then check it closely.
ok=
for _ in $(seq 40); do
	sleep 0.5
	inB "$CTL" paths $DEV_B --json >"$W/b.json" 2>"$W/b.err" || continue
	if python3 - "$W/b.json" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
c = [c for p in d["processes"] for c in p["conns"]]
sys.exit(0 if c and all(p["srtt_ns"] > 0 for p in c[0]["paths"]) else 1)
PY
		ok=1
		break
	fi
	kill -0 "$CPID" 2>/dev/null || break
done
[ -n "$ok" ] || {
	cat "$W/b.json" "$W/b.err" "$W/cli.log" 2>/dev/null | tail -40
	die "the sender's paths never all had an RTT"
}
inA "$CTL" paths $DEV_A --json >"$W/a.json" || die "paths $DEV_A --json"
inB "$CTL" paths $DEV_B >"$W/b.txt" || die "paths $DEV_B"
timeout 4 ip netns exec "$NSB" "$CTL" paths $DEV_B --json --watch=0.5 \
	>"$W/watch.json" 2>&1
rc=$?
[ $rc = 124 ] || die "paths --watch ended by itself (exit $rc): $(tail -3 "$W/watch.json")"

python3 - "$W/b.json" "$W/a.json" "$W/watch.json" $NPATHS <<'PY' ||
import json, sys
b = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))
npaths = int(sys.argv[4])
def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)
for side, d in (("sender", b), ("receiver", a)):
    procs = d["processes"]
    if len(procs) != 1:
        fail(f"{side}: {len(procs)} processes")
    conns = procs[0]["conns"]
    if len(conns) != 1 or procs[0]["conns_total"] != 1:
        fail(f"{side}: {len(conns)} connections, expected 1")
    c = conns[0]
    # perftest leaves the passive side's QP in RTR.
    want = "RTS" if side == "sender" else ("RTR", "RTS")
    if c["qp_state"] not in want or c["npaths"] != npaths:
        fail(f"{side}: state {c['qp_state']}, {c['npaths']} paths")
    if len(c["paths"]) != npaths:
        fail(f"{side}: {len(c['paths'])} path objects")
    ports = set()
    for i, p in enumerate(c["paths"]):
        if p["path"] != i or p["home_plane"] != i % 2 or (
                p["plane"] != i % 2 and c["planes_down"] == 0):
            fail(f"{side}: path {i}: id {p['path']} plane {p['plane']}")
        if not 49152 <= p["sport"] <= 65535:
            fail(f"{side}: path {i}: source port {p['sport']}")
        ports.add((p["plane"], p["sport"]))
        if p["state"] not in ("active", "backoff", "suspect", "probing", "remapped"):
            fail(f"{side}: path {i}: state {p['state']}")
        if not 0 <= p["ecn_frac"] <= 1 or not 0 <= p["loss_frac"] <= 1:
            fail(f"{side}: path {i}: fractions {p['ecn_frac']} {p['loss_frac']}")
    if len(ports) != npaths:
        fail(f"{side}: source ports not distinct per plane: {sorted(ports)}")
# The sender: every path carried data and has RTT samples.
cb = b["processes"][0]["conns"][0]
ca = a["processes"][0]["conns"][0]
if cb["dest_qpn"] != ca["qpn"] or ca["dest_qpn"] != cb["qpn"]:
    fail(f"QPNs do not pair: {cb['qpn']}->{cb['dest_qpn']}, {ca['qpn']}->{ca['dest_qpn']}")
# GID 0 (perftest -x 0) is the IPv4 address or the IPv6 link-local one.
import ipaddress
for side, c, want in (("sender", cb, "10.87.0.1"), ("receiver", ca, "10.87.0.2")):
    pa = ipaddress.ip_address(c["peer"])
    if not (str(pa) == want or (pa.version == 6 and pa.is_link_local)):
        fail(f"{side}: peer {c['peer']}")
if cb["peer"] == ca["peer"]:
    fail(f"both peers are {cb['peer']}")
for p in cb["paths"]:
    if p["tx_pkts"] == 0 or p["acked_pkts"] == 0:
        fail(f"sender path {p['path']}: tx {p['tx_pkts']} acked {p['acked_pkts']}")
    if not 0 < p["min_rtt_ns"] <= p["srtt_ns"] or p["rto_ns"] < p["min_rtt_ns"]:
        fail(f"sender path {p['path']}: rtt min {p['min_rtt_ns']} srtt {p['srtt_ns']} rto {p['rto_ns']}")
    if p["inflight_pkts"] > p["window_pkts"] or p["window_pkts"] == 0:
        fail(f"sender path {p['path']}: in flight {p['inflight_pkts']} window {p['window_pkts']}")
    # Spraying weight (MR-MP-9): 1..16, 0 while probing (MR-PM-1).
    if not (p["weight"] == 0 if p["state"] == "probing" else 1 <= p["weight"] <= 16):
        fail(f"sender path {p['path']}: weight {p['weight']}, {p['state']}")
# The receiver: every path received the sender's packets.
for p in ca["paths"]:
    if p["rx_pkts"] == 0:
        fail(f"receiver path {p['path']}: nothing received")
# --watch --json: one object per line, at least 3 in 4 s at 0.5 s (each
# look scans /proc for holders: slow on a loaded machine).
lines = [l for l in open(sys.argv[3]) if l.strip()]
objs = [json.loads(l) for l in lines]
if len(objs) < 3 or any(o["device"] != "pkgb" for o in objs):
    fail(f"--watch printed {len(objs)} objects")
tx = [o["processes"][0]["conns"][0]["tx_pkts"] for o in objs if o["processes"] and o["processes"][0]["conns"]]
if len(tx) < 2 or tx[-1] <= tx[0]:
    fail(f"--watch: sent packets do not grow: {tx}")
print(f"ok: sender qpn {cb['qpn']} -> {cb['peer']} qpn {cb['dest_qpn']}, "
      f"{npaths} paths on planes 0,1, ports {sorted(p['sport'] for p in cb['paths'])}")
print("ok: srtt (us):", [round(p["srtt_ns"] / 1e3, 1) for p in cb["paths"]],
      "min:", [round(p["min_rtt_ns"] / 1e3, 1) for p in cb["paths"]])
print(f"ok: --watch: {len(objs)} objects, tx_pkts {tx[0]} -> {tx[-1]}")
PY
	die "paths --json"

# Text: a header and one row per path under the connection line.
echo "--- metaroce-ctl paths $DEV_B"
cat "$W/b.txt"
grep -Eq "^  qpn [0-9]+ -> (10\.87\.0\.1|fe80:[0-9a-f:]+) qpn [0-9]+, RTS, $NPATHS paths" "$W/b.txt" ||
	die "text: no connection line"
grep -Eq "^ +path +plane +home +sport +state +weight +min_rtt +srtt" "$W/b.txt" ||
	die "text: no header"
rows=$(awk '/^ +path +plane/ {h = 1; next} h && NF > 10 {n++} END {print n + 0}' "$W/b.txt")
[ "$rows" = $NPATHS ] || die "text: $rows path rows, expected $NPATHS"
echo "ok: text: $rows path rows"

wait "$CPID"
crc=$?
wait "$SPID"
src=$?
[ $crc = 0 ] && [ $src = 0 ] || {
	tail -20 "$W/cli.log" "$W/srv.log"
	die "ib_write_bw exit $crc / $src"
}
echo "ok: ib_write_bw: $(grep -E '^ *65536 ' "$W/cli.log" | head -1)"
