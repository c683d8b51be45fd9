#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# RoCE v2 over IPv6 through a router: host A - router R - host B, three
# network namespaces, R forwarding IPv6 (and IPv4 for the programs' own TCP
# exchange). The devices' global IPv6 addresses (GID 2) sit in two
# different /64s; each host's kernel routes the other's prefix via R's
# link-local address fe80::1 (docs/spec/routing.md MR-ADDR-4: the kernel's
# IPv6 table, a link-local next hop of the plane); R finds the devices
# with neighbour discovery and the devices find R the same way (MR-ENC-13).
# Unmodified programs through metaroce-run: ibv_rc_pingpong -g 2,
# ibv_ud_pingpong -g 2 (its reply path: the IPv6 GRH, MR-UD-5),
# ib_write_bw -x 2, ib_read_lat -x 2; neighbour entries re-verified as they
# expire (MR-ROUTE-8) during traffic; then the route to B's prefix
# removed in A: the RC example's modify to RTR fails at once
# (ENETUNREACH, MR-ROUTE-6), no hang.
#
# Usage: routed6.sh CTL RUN
# Everything it creates goes on exit, whatever the exit path.
set -u
CTL=${1:?usage: routed6.sh CTL RUN}
RUN=${2:?usage}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, veth, /dev nodes)"
	exit 77
fi
for p in ibv_rc_pingpong ibv_ud_pingpong ib_write_bw ib_read_lat; do
	if ! command -v "$p" >/dev/null; then
		echo "SKIP: $p is not installed (scripts/deps.sh)"
		exit 77
	fi
done

TAG=$$
NSA=mr6A$TAG
NSB=mr6B$TAG
NSR=mr6R$TAG
DEV_A=mr6a
DEV_B=mr6b
# shellcheck source=tests/integration/hosts.sh
. "$(dirname "$0")/hosts.sh"
hosts_init mri-r6
r6_cleanup() {
	hosts_cleanup
	ip netns del "$NSR" 2>/dev/null
}
trap r6_cleanup EXIT
T=${MRI_TIMEOUT:-60}
inR() { ip netns exec "$NSR" "$@"; }

NS_MADE=1
for ns in "$NSA" "$NSB" "$NSR"; do
	ip netns add "$ns" || die "ip netns add $ns"
	ip -n "$ns" link set lo up || die "lo up"
done
ip link add va netns "$NSA" type veth peer name ra netns "$NSR" || die "veth"
ip link add vb netns "$NSB" type veth peer name rb netns "$NSR" || die "veth"
for l in "$NSA va" "$NSB vb" "$NSR ra" "$NSR rb"; do
	set -- $l
	ip -n "$1" link set "$2" mtu 9000 up || die "link up $2"
done
inR sysctl -qw net.ipv6.conf.all.forwarding=1 net.ipv4.ip_forward=1 ||
	die "forwarding"
# R: fe80::1 on both links (nodad: usable at once), a global address in
# each prefix; its connected /64 routes reach the devices by ND.
for i in ra rb; do
	inR ip -6 addr add fe80::1/64 dev $i nodad || die "R $i fe80::1"
done
inR ip -6 addr add 2001:db8:a::fe/64 dev ra nodad || die "R addr"
inR ip -6 addr add 2001:db8:b::fe/64 dev rb nodad || die "R addr"
# The programs' TCP exchange runs over IPv4 through R as well.
inR ip addr add 10.88.1.254/24 dev ra && inR ip addr add 10.88.2.254/24 dev rb &&
	ip -n "$NSA" addr add 10.88.1.1/24 dev va &&
	ip -n "$NSB" addr add 10.88.2.1/24 dev vb &&
	ip -n "$NSA" route add default via 10.88.1.254 &&
	ip -n "$NSB" route add default via 10.88.2.254 || die "IPv4"
# Hosts: the other device's prefix via R's link-local address.
ip -n "$NSA" -6 route add 2001:db8:b::/64 via fe80::1 dev va || die "route A"
ip -n "$NSB" -6 route add 2001:db8:a::/64 via fe80::1 dev vb || die "route B"
TCP_A=10.88.1.1

inA "$CTL" link add $DEV_A --port net_af_packet0,iface=va \
	--ip 10.89.0.1/32 --ip 2001:db8:a::1/64 >"$W/ctl.log" 2>&1 ||
	die "link add A: $(cat "$W/ctl.log")"
inB "$CTL" link add $DEV_B --port net_af_packet0,iface=vb \
	--ip 10.89.0.2/32 --ip 2001:db8:b::2/64 >"$W/ctl.log" 2>&1 ||
	die "link add B: $(cat "$W/ctl.log")"
inA "$CTL" link show $DEV_A | grep 'gid 2 ' || die "no GID 2 on A"

show() {
	echo "--- $1 ($2)"
	sed 's/^/  /' "$2"
}

# pair PREFIX TCPPORT SERVER_ARGS... -- CLIENT_ARGS...: the server in A
# (waits until it listens), the client in B; both must exit 0.
pair() {
	local pre=$1 port=$2 s=() spid crc src
	shift 2
	while [ "$1" != -- ]; do
		s+=("$1")
		shift
	done
	shift
	echo "server (A): ${s[*]}"
	echo "client (B): $* $TCP_A"
	bg_in "$NSA" "$W/$pre.srv" timeout -k 5 "$T" "$RUN" "${s[@]}"
	spid=$BG_PID
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	inB timeout -k 5 "$T" "$RUN" "$@" $TCP_A >"$W/$pre.cli" 2>&1
	crc=$?
	wait "$spid"
	src=$?
	show server "$W/$pre.srv"
	show client "$W/$pre.cli"
	[ $crc = 0 ] && [ $src = 0 ] ||
		die "$pre: client exit $crc, server exit $src"
}

pair rc 18515 ibv_rc_pingpong -d $DEV_A -g 2 -n 50 -- \
	ibv_rc_pingpong -d $DEV_B -g 2 -n 50
grep -Eq '^50 iters in' "$W/rc.cli" || die "rc: no '50 iters' line"
grep -q 'GID 2001:db8:a::1' "$W/rc.cli" || die "rc: A's GID not 2001:db8:a::1"
pair ud 18515 ibv_ud_pingpong -d $DEV_A -g 2 -n 50 -- \
	ibv_ud_pingpong -d $DEV_B -g 2 -n 50
grep -Eq '^50 iters in' "$W/ud.srv" || die "ud: no '50 iters' line"
pair bw 18515 ib_write_bw -d $DEV_A -x 2 -F -n 200 -s 65536 -- \
	ib_write_bw -d $DEV_B -x 2 -F -n 200 -s 65536
awk '/^ *65536 +200 +[0-9.]+ +[0-9.]+/ {ok = $4 > 0} END {exit !ok}' \
	"$W/bw.cli" || die "ib_write_bw: no positive 65536-byte row"
pair lat 18515 ib_read_lat -d $DEV_A -x 2 -F -n 100 -s 64 -- \
	ib_read_lat -d $DEV_B -x 2 -F -n 100 -s 64
awk '/^ *64 +100 +[0-9.]+/ {ok = 1} END {exit !ok}' "$W/lat.cli" ||
	die "ib_read_lat: no 64-byte row"
# The packets were routed: the router forwarded IPv6 both ways, and the
# devices resolved fe80::1 (or took it from the kernel) and answered ND.
fwd=$(inR awk '$1 == "Ip6OutForwDatagrams" {print $2}' /proc/net/snmp6)
echo "router: Ip6OutForwDatagrams $fwd"
[ "${fwd:-0}" -gt 400 ] || die "router forwarded only ${fwd:-0} IPv6 packets"

# MR-ROUTE-8 live: with a reachable time of 300 ms, A re-verifies its next
# hop (R's fe80::1, which data never confirms: MR-ROUTE-7) again and again
# while 3 s of ib_write_bw run, and the run keeps going.
pair exp 18515 env METAROCE_DP_NEIGH_REACH_MS=300 ib_write_bw -d $DEV_A -x 2 \
	-F -D 3 -s 65536 -- env METAROCE_DP_NEIGH_REACH_MS=300 ib_write_bw \
	-d $DEV_B -x 2 -F -D 3 -s 65536
awk '/^ *65536 +[0-9]+ +[0-9.]+ +[0-9.]+/ {ok = $4 > 0} END {exit !ok}' \
	"$W/exp.cli" || die "ib_write_bw -D 3: no positive row"
req=$(inB "$CTL" stats $DEV_B --last --json | python3 -c '
import json, sys
ps = json.load(sys.stdin)["processes"]
p = max(ps, key=lambda p: (p["written"], p["pid"]))["counters"]["planes"][0]
print(p["arp_req_tx"], p["arp_reply_rx"], p["tx_drop"]["neighbour_unreachable"])')
echo "B during 3 s at dp_neigh_reach_ms=300: NS sent, NA received, drops: $req"
ip -n "$NSB" -6 neigh show dev vb
set -- $req
[ "${1:-0}" -ge 4 ] && [ "${2:-0}" -ge 4 ] && [ "${3:-1}" = 0 ] ||
	die "next hop not re-verified as it expired (NS $1, NA $2, drops $3)"

# No route to B's prefix in A: the modify to RTR fails quickly.
ip -n "$NSA" -6 route del 2001:db8:b::/64 || die "route del"
bg_in "$NSB" "$W/nr.srv" timeout -k 5 20 "$RUN" ibv_rc_pingpong -d $DEV_B -g 2 -n 5
spid=$BG_PID
sleep 1
t0=$(date +%s)
inA timeout -k 5 20 "$RUN" ibv_rc_pingpong -d $DEV_A -g 2 -n 5 10.88.2.1 \
	>"$W/nr.cli" 2>&1
rc=$?
t1=$(date +%s)
kill -9 -- "-$spid" 2>/dev/null
show "client with no route" "$W/nr.cli"
[ $rc != 0 ] && [ $rc != 124 ] || die "no route: exit $rc, expected a failure"
grep -q 'Failed to modify QP to RTR' "$W/nr.cli" ||
	die "no route: not refused at RTR"
[ $((t1 - t0)) -lt 10 ] || die "no route: took $((t1 - t0)) s"
echo "ok: routed IPv6: rc/ud pingpong, ib_write_bw, ib_read_lat over GID 2; no route refused at RTR"
