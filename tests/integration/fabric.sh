#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# MetaRoCE through a routed fabric (metaroce-fabric), real provider,
# real processes, every byte checked by mri-verbs.
#
# Usage: fabric.sh CTL RUN FABRIC MRI_VERBS CASE
#   routed:    host - leaf router - host on two planes (the peer two hops
#              away, next hops from the kernel's routes, MR-ROUTE-2/3),
#              mri-verbs data; then the device address's route removed
#              from the client's host: ib_write_bw's modify to RTR fails
#              at once with ENETUNREACH (MR-ROUTE-6), no hang.
#   loss_flap: two planes of two leaves and two spines, 5% of packets
#              lost end to end (2.5% on every host link direction), plane
#              2 down from 2 s to 5 s of the transfer: mri-verbs data of
#              MRI_STEPS steps (default 40), every byte checked.
# Everything it makes goes on exit, whatever the exit path.
set -u
CTL=${1:?usage: fabric.sh CTL RUN FABRIC MRI_VERBS CASE}
RUN=${2:?usage}
FAB=${3:?usage}
VERBS=${4:?usage}
CASE=${5:?usage}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, tc, BPF)"
	exit 77
fi
NAME=fi$$
NAME=${NAME:0:8}
NSA=$NAME-a
NSB=$NAME-b
DEV_A=mrfa
DEV_B=mrfb
# shellcheck source=tests/integration/hosts.sh
. "$(dirname "$0")/hosts.sh"
hosts_init mri-fab
export METAROCE_FABRIC_DIR=$W/fabric
T=${MRI_TIMEOUT:-150}
# The fabric owns the namespaces: programs first, then the devices (their
# /dev nodes outlive a namespace), then the fabric, then the scratch dir
# (which holds the fabric's state).
fab_cleanup() {
	hosts_stop_programs
	if [ -n "$NS_MADE" ]; then
		inA "$CTL" link del $DEV_A >/dev/null 2>&1
		inB "$CTL" link del $DEV_B >/dev/null 2>&1
	fi
	"$FAB" -f "$NAME" down >/dev/null 2>&1
	rm -rf "$W"
}
trap fab_cleanup EXIT

case $CASE in
routed)
	cat >"$W/f.conf" <<EOC
name $NAME
planes 2
leaves 1
host a leaf=1
host b leaf=1
EOC
	;;
loss_flap)
	cat >"$W/f.conf" <<EOC
name $NAME
planes 2
leaves 2
spines 2
host a leaf=1
host b leaf=2
link '*' rate=2gbit queue=512k ecn=128k
link p*/a-l1 loss=2.5%
link p*/b-l2 loss=2.5%
EOC
	sed -i "s/'\*'/*/" "$W/f.conf"
	;;
*)
	die "unknown case $CASE"
	;;
esac
"$FAB" up "$W/f.conf" >"$W/fab.log" 2>&1 || die "fabric up: $(cat "$W/fab.log")"
cat "$W/fab.log"
NS_MADE=1
ports="--port net_af_packet0,iface=p1 --port net_af_packet1,iface=p2"
# shellcheck disable=SC2086
inA "$CTL" link add $DEV_A $ports --ip 10.200.0.1/32 >"$W/ctl.log" 2>&1 ||
	die "link add A: $(cat "$W/ctl.log")"
# shellcheck disable=SC2086
inB "$CTL" link add $DEV_B $ports --ip 10.200.0.2/32 >"$W/ctl.log" 2>&1 ||
	die "link add B: $(cat "$W/ctl.log")"

show() {
	echo "--- $1"
	cat "$2"
}

# verbs_data [STEPS]: mri-verbs server in A, client in B; both must pass.
verbs_data() {
	bg_in "$NSA" "$W/v.srv" timeout -k 5 "$T" "$RUN" "$VERBS" server \
		-d $DEV_A
	SPID=$BG_PID
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :18600" | grep -q . && break
		sleep 0.1
	done
	[ -n "${FLAP:-}" ] && "$FAB" set 'p2/*' $FLAP >/dev/null
	inB timeout -k 5 "$T" "$RUN" "$VERBS" client -d $DEV_B -n "$1" \
		10.254.1.1 >"$W/v.cli" 2>&1
	crc=$?
	wait "$SPID"
	src=$?
	if [ $crc -ne 0 ] || [ $src -ne 0 ] || grep -q FAIL "$W/v.cli" "$W/v.srv" ||
		! grep -q "^client: done" "$W/v.cli"; then
		show client "$W/v.cli"
		show server "$W/v.srv"
		"$FAB" stats
		die "mri-verbs: client $crc, server $src"
	fi
	grep -c "memory ok" "$W/v.srv" | sed 's/^/server steps verified: /'
	tail -2 "$W/v.cli"
}

case $CASE in
routed)
	verbs_data 18
	# The next hops came from the kernel: each plane's gateway resolved.
	inB "$CTL" stats $DEV_B --last --json >"$W/st.json"
	python3 - "$W/st.json" <<'EOP' || die "counters"
import json, sys
c = [p["counters"] for p in json.load(open(sys.argv[1]))["processes"]][0]
for p in c["planes"]:
    assert p["tx_pkts"] > 0 and p["rx_pkts"] > 0, p
    assert p["tx_drop"]["no_route"] == 0, p
print("both planes carried traffic through the leaf; no_route 0")
EOP
	# MR-ROUTE-5: a route change while a program runs is read again.
	bg_in "$NSA" "$W/bw0.srv" timeout -k 5 30 "$RUN" ib_write_bw -d $DEV_A \
		-x 1 -D 6
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :18515" | grep -q . && break
		sleep 0.1
	done
	bg_in "$NSB" "$W/bw0.cli" timeout -k 5 30 "$RUN" ib_write_bw -d $DEV_B \
		-x 1 -D 6 10.254.1.1
	cpid=$BG_PID
	# Once the client's device carries traffic (a loaded machine may take
	# seconds to get there), the kernel's table changes.
	for _ in $(seq 100); do
		inB "$CTL" stats $DEV_B --json 2>/dev/null |
			grep -Eq '"tx_pkts": *[1-9]' && break
		sleep 0.1
	done
	inB ip route add 10.99.0.0/24 via 10.101.2.254 dev p1 || die "route add"
	wait "$cpid" || { show client "$W/bw0.cli"; die "ib_write_bw -D 6"; }
	rel=$(inB "$CTL" stats $DEV_B --last --json | python3 -c '
import json, sys
# the newest process (the mri-verbs client that ran before may be listed)
ps = json.load(sys.stdin)["processes"]
print(max(ps, key=lambda p: (p["written"], p["pid"]))["counters"]["route_reloads"])')
	[ "${rel:-0}" -ge 1 ] || die "route change not followed (route_reloads ${rel:-?})"
	echo "a route added during the run: the device read the tables again ($rel)"
	# MR-ROUTE-6: no route on any plane -> RTR fails, fast.
	inB ip route del 10.200.0.0/24 || die "route del"
	bg_in "$NSA" "$W/bw.srv" timeout -k 5 30 "$RUN" ib_write_bw -d $DEV_A \
		-x 1 -n 5
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :18515" | grep -q . && break
		sleep 0.1
	done
	t0=$(date +%s)
	inB timeout -k 5 30 "$RUN" ib_write_bw -d $DEV_B -x 1 -n 5 10.254.1.1 \
		>"$W/bw.cli" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	[ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $dt -lt 20 ] || {
		show client "$W/bw.cli"
		die "ib_write_bw without a route: exit $rc after ${dt}s"
	}
	grep -q "Failed to modify QP.*to RTR" "$W/bw.cli" || {
		show client "$W/bw.cli"
		die "ib_write_bw did not fail in modify to RTR"
	}
	echo "no route: ib_write_bw failed in ${dt}s: $(grep -m1 'Failed to modify' "$W/bw.cli")"
	;;
loss_flap)
	FLAP="down_at=2 up_at=5"
	verbs_data "${MRI_STEPS:-40}"
	"$FAB" stats | grep -E '^(link|p[12]/(a>l1|b>l2|l1>a|l2>b))'
	inB "$CTL" stats $DEV_B --last | grep -E 'retx_pkts|sack_holes|timeouts|rto_events' | head -8
	;;
esac
echo "PASS: fabric $CASE"
