#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The datapath service (utils/metaroced): on each of two hosts (namespaces
# joined by one veth pair) one metaroced owns the af_packet port and N
# applications (mrdp-rdma: WRITE, READ, SEND, atomics, every byte checked)
# reach it with port=service:<socket>, QPN slot k each; process k of host
# A runs against process k of host B, all N pairs at once. Checked:
#   - no daemon: the application's open fails saying so (nothing made);
#   - a record that is not the daemon's device: refused, saying why;
#   - every pair passes; each application's counters show only its own
#     frames (no packet for a QPN it does not have, frames polled = its
#     packets + ARP + ND); each daemon's per-application counters show
#     frames to and from every application and none for no application;
#   - an application killed (SIGKILL) mid-run: the daemon survives,
#     counts it died, frees its slot (a new application takes the same
#     slot), and the other pair, run meanwhile, passes;
#   - the daemon killed under a waiting application: the application
#     says the service is gone.
#   - with metaroce-ctl and metaroce-run: devices made with
#     --port service:SOCKET; without a daemon ibv_open_device fails saying
#     so; unmodified ibv_rc_pingpong -c (every received buffer checked)
#     through the daemons.
# Usage: dp_svc.sh PATH/TO/mrdp-rdma PATH/TO/metaroced [N [CTL RUN]]
set -u
BIN=${1:?usage: dp_svc.sh mrdp-rdma metaroced [n [metaroce-ctl metaroce-run]]}
SVC=${2:?usage: dp_svc.sh mrdp-rdma metaroced [n [metaroce-ctl metaroce-run]]}
N=${3:-2}
CTL=${4:-}
RUN=${5:-}

if [ "$(id -u)" != 0 ]; then
	echo "dp_svc: needs root (network namespaces); skipped"
	exit 77
fi
command -v ip >/dev/null || { echo "dp_svc: no ip; skipped"; exit 77; }

# shellcheck source=tests/dp/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair svc mrv 9000 || {
	echo "dp_svc: cannot build the veth pair"
	exit 1
}
DPIDS=()
svc_cleanup() {
	local p
	for p in "${DPIDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	veth_pair_cleanup
}
trap svc_cleanup EXIT INT TERM

for side in a b; do
	n=1
	[ $side = b ] && n=2
	common="ip=10.78.0.$n/24
mac=02:00:0a:4e:00:0$n
mtu=4096
udp_port=4797"
	# DP_DEV: the daemon's port kind (default net_af_packet0).
	printf 'name=mrsv%s\nport=%s,iface=%s\n%s\n' $side \
		"${DP_DEV:-net_af_packet0}" \
		"$([ $side = a ] && echo "$VA" || echo "$VB")" "$common" \
		>"$DIR/$side.ports"
	printf 'name=mrsv%s\nport=service:%s\n%s\n' $side "$DIR/$side.sock" \
		"$common" >"$DIR/$side.conf"
	# The same device with another MTU: not the daemon's.
	printf 'name=mrsv%s\nport=service:%s\n%s\n' $side "$DIR/$side.sock" \
		"$(echo "$common" | sed 's/mtu=4096/mtu=1024/')" \
		>"$DIR/$side.bad"
done
ns_of() { [ "$1" = a ] && echo "$NSA" || echo "$NSB"; }

fail=0
say_fail() {
	echo "dp_svc: FAIL: $*"
	fail=1
}

# 1. No daemon yet: a clear error at open.
ip netns exec "$NSA" timeout 60 "$BIN" client "$DIR/a.conf" 10.78.0.2 \
	>"$DIR/nodaemon" 2>&1 && say_fail "opened without a daemon"
grep -q "no datapath service at $DIR/a.sock" "$DIR/nodaemon" ||
	{ say_fail "no clear error without a daemon:"; cat "$DIR/nodaemon"; }

start_daemon() { # side
	local side=$1 i
	ip netns exec "$(ns_of "$side")" "$SVC" --socket "$DIR/$side.sock" \
		--stats "$DIR/$side.json" "$DIR/$side.ports" \
		>"$DIR/$side.daemon" 2>&1 &
	DPIDS+=($!)
	eval "DPID_$side=$!"
	for i in $(seq 200); do
		grep -q "serving at" "$DIR/$side.daemon" && return 0
		sleep 0.1
	done
	echo "dp_svc: metaroced on $side did not start:"
	cat "$DIR/$side.daemon"
	return 1
}
start_daemon a && start_daemon b || exit 1

# 2. Not the daemon's device.
ip netns exec "$NSA" timeout 60 "$BIN" client "$DIR/a.bad" 10.78.0.2 \
	>"$DIR/badrec" 2>&1 && say_fail "a record of another MTU was served"
grep -q "refused: the record's mtu 1024 is not" "$DIR/badrec" ||
	{ say_fail "no clear refusal:"; cat "$DIR/badrec"; }

jnum() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }
jn() { local v; v=$(jnum "$1" "$2"); echo "${v:-0}"; }
# A daemon counter of application SLOT ($3) in stats file $1: field $2.
appnum() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
a=[x for x in d["app"] if x["slot"]==int(sys.argv[3])]
print(a[0][sys.argv[2]] if a else -1)' "$1" "$2" "$3"
}

# One pair on slot k: server on B, client on A; TAG names the outputs.
start_server() { # tag k
	env MRDP_TEST_STEER_SLOT="$2" ip netns exec "$NSB" timeout 120 \
		"$BIN" server "$DIR/b.conf" 10.78.0.1 >"$DIR/$1.srv$2" 2>&1 &
	SRV=$!
}
wait_up() { # file
	local i
	for i in $(seq 200); do
		grep -q "server: up" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
start_client() { # tag k
	env MRDP_TEST_STEER_SLOT="$2" ip netns exec "$NSA" timeout 120 \
		"$BIN" client "$DIR/a.conf" 10.78.0.2 >"$DIR/$1.cli$2" 2>&1 &
	CLI=$!
}

# Each application saw only its own frames.
own_frames() { # file
	local f=$1 eng frames pkts arp v6
	grep -o 'datapath .*' "$f" | head -1 >"$f.json"
	# The engine line lists its nonzero counters only.
	eng=$(grep -o 'drop_unknown_qp=[0-9]*' "$f" | head -1 | cut -d= -f2)
	eng=${eng:-0}
	frames=$(jn "$f.json" rx_frames)
	pkts=$(jn "$f.json" rx_pkts)
	arp=$(($(jn "$f.json" arp_req_rx) + $(jn "$f.json" arp_reply_rx)))
	v6=$(($(jn "$f.json" not_ipv4) + $(jn "$f.json" arp) +
		$(jn "$f.json" not_ours) + $(jn "$f.json" short) +
		$(jn "$f.json" ip_header)))
	echo "dp_svc: $(basename "$f"): rx_frames=$frames rx_pkts=$pkts" \
		"arp=$arp nd/other=$v6 drop_unknown_qp=$eng"
	if [ "$eng" != 0 ] || [ "$pkts" -eq 0 ] ||
		[ "$frames" -gt $((pkts + arp + v6)) ]; then
		say_fail "$(basename "$f") saw frames that were not its own"
		sed 's/^/  /' "$f"
	fi
}

# 3. N pairs at once through the two daemons.
pids=()
for k in $(seq "$N"); do
	start_server run "$k"
	pids+=($SRV)
done
for k in $(seq "$N"); do
	wait_up "$DIR/run.srv$k" || say_fail "server $k did not come up"
done
for k in $(seq "$N"); do
	start_client run "$k"
	pids+=($CLI)
done
for p in "${pids[@]}"; do
	wait "$p" || { say_fail "a process failed"; }
done
[ $fail = 0 ] || for f in "$DIR"/run.*; do
	echo "--- $f"
	sed 's/^/  /' "$f"
done
# The daemon's per-application counters (its line when each closed)
# against the application's own: every frame it polled was given to it
# by the daemon, and every frame it sent went out through the daemon.
daemon_vs_app() { # file side
	local f=$1 pid to from rx tx
	pid=$(jn "$f.json" pid)
	to=$(grep -o "pid $pid, slot [0-9]*) closed: .* (\([0-9]*\) frames to" \
		"$DIR/$2.daemon" | grep -o '([0-9]* frames' | tr -dc 0-9)
	from=$(grep -o "pid $pid, slot [0-9]*) closed: .*" "$DIR/$2.daemon" |
		grep -o '[0-9]* from it' | tr -dc 0-9)
	rx=$(jn "$f.json" rx_frames)
	tx=$(($(jn "$f.json" tx_pkts) + $(jn "$f.json" arp_req_tx) +
		$(jn "$f.json" arp_reply_tx)))
	echo "dp_svc: $(basename "$f") (pid $pid): daemon $2 gave it" \
		"${to:-?} frames, it polled $rx; it sent $tx, the daemon" \
		"took ${from:-?}"
	if [ -z "$to" ] || [ -z "$from" ] || [ "$rx" -gt "$to" ] ||
		[ "$tx" != "$from" ]; then
		say_fail "daemon $2's counters of $(basename "$f") do not match"
	fi
}
for f in "$DIR"/run.srv* "$DIR"/run.cli*; do
	own_frames "$f"
done
for k in $(seq "$N"); do
	daemon_vs_app "$DIR/run.srv$k" b
	daemon_vs_app "$DIR/run.cli$k" a
done
sleep 1.2 # the daemons rewrite their counters every second
for side in a b; do
	echo "dp_svc: metaroced $side: $(cat "$DIR/$side.json")"
	[ "$(jn "$DIR/$side.json" apps_closed)" = "$N" ] ||
		say_fail "daemon $side: not $N applications closed"
	[ "$(jn "$DIR/$side.json" no_app)" = 0 ] ||
		say_fail "daemon $side: frames for no application"
	[ "$(jn "$DIR/$side.json" apps_died)" = 0 ] ||
		say_fail "daemon $side: an application died"
done

# Per-application counters while they run, and a death mid-run: pairs
# on slots 3 and 4; the slot-4 server is stopped (SIGSTOP) once up, so
# its client's frames pile up in its ring, then killed (SIGKILL). The
# slot-3 pair runs meanwhile and must pass.
start_server death 3
S3=$SRV
start_server death 4
S4=$SRV
wait_up "$DIR/death.srv3" && wait_up "$DIR/death.srv4" ||
	say_fail "death: servers did not come up"
# $S4 is timeout(1); the application is its child.
app4=$(pgrep -P "$S4")
kill -STOP "$app4"
start_client death 3
C3=$CLI
start_client death 4
C4=$CLI
b4=-1
for i in $(seq 100); do
	sleep 0.2
	b4=$(appnum "$DIR/b.json" rx_frames 4)
	[ "$b4" -gt 0 ] && break
done
b3=$(appnum "$DIR/b.json" rx_frames 3)
echo "dp_svc: daemon b's counters file (rewritten every second): slot 3" \
	"rx_frames=$b3, slot 4 rx_frames=$b4 (stopped)"
[ "$b4" -gt 0 ] ||
	say_fail "daemon b's counters file shows no frames for slot 4"
kill -9 "$app4"
wait "$S4" 2>/dev/null
app4=$(pgrep -P "$C4")
[ -n "$app4" ] && kill "$app4" # it lost its peer
wait "$C4" 2>/dev/null
wait "$S3" || say_fail "slot 3 server failed while slot 4 died"
wait "$C3" || say_fail "slot 3 client failed while slot 4 died"
own_frames "$DIR/death.srv3"
kill -0 "$DPID_b" 2>/dev/null || say_fail "daemon b did not survive"
sleep 1.2
died=$(jn "$DIR/b.json" apps_died)
echo "dp_svc: daemon b after the kill: apps_died=$died" \
	"apps=$(jn "$DIR/b.json" apps)"
[ "$died" = 1 ] || say_fail "daemon b counted $died deaths, not 1"
grep "slot 4) died" "$DIR/b.daemon" | sed 's/^/dp_svc: /' | grep . ||
	say_fail "daemon b did not say slot 4 died"
# Its slot is free again: a new pair on slot 4 passes.
start_server again 4
S4=$SRV
wait_up "$DIR/again.srv4" || say_fail "slot 4 not free after the death"
start_client again 4
wait "$CLI" || say_fail "the new slot-4 client failed"
wait "$S4" || say_fail "the new slot-4 server failed"
own_frames "$DIR/again.cli4"

# Unmodified verbs programs on devices made by metaroce-ctl.
verbs() {
	local ka=10.79.1.1 kb=10.79.1.2 s
	export METAROCE_RUNDIR=$DIR/run
	ip -n "$NSA" addr add $ka/24 dev "$VA" &&
		ip -n "$NSB" addr add $kb/24 dev "$VB" ||
		{ say_fail "cannot address the link for TCP"; return; }
	ip netns exec "$NSA" "$CTL" link add mrsvpa --port "service:$DIR/a.sock" \
		--ip 10.78.0.1/24 --mac 02:00:0a:4e:00:01 >/dev/null &&
		ip netns exec "$NSB" "$CTL" link add mrsvpb \
			--port "service:$DIR/b.sock" --ip 10.78.0.2/24 \
			--mac 02:00:0a:4e:00:02 >/dev/null &&
		ip netns exec "$NSA" "$CTL" link add mrsvpx \
			--port "service:$DIR/none.sock" --ip 10.78.9.1/24 \
			>/dev/null || { say_fail "metaroce-ctl link add"; return; }
	ip netns exec "$NSA" "$CTL" link show mrsvpa | grep -q "service:$DIR/a.sock" ||
		say_fail "link show does not show the service port"
	# No daemon behind the socket: the open itself fails, saying why.
	ip netns exec "$NSA" timeout 60 "$RUN" ibv_rc_pingpong -d mrsvpx -g 1 \
		>"$DIR/verbs.nod" 2>&1 && say_fail "ibv_rc_pingpong ran without a daemon"
	if grep -q "no datapath service at $DIR/none.sock" "$DIR/verbs.nod" &&
		grep -q "Couldn't get context" "$DIR/verbs.nod"; then
		echo "dp_svc: no daemon: $(head -1 "$DIR/verbs.nod")"
	else
		say_fail "ibv_open_device without a daemon:"
		cat "$DIR/verbs.nod"
	fi
	ip netns exec "$NSB" timeout 120 "$RUN" ibv_rc_pingpong -d mrsvpb -g 1 \
		-c -s 65536 -n 200 >"$DIR/verbs.srv" 2>&1 &
	s=$!
	sleep 1
	ip netns exec "$NSA" timeout 120 "$RUN" ibv_rc_pingpong -d mrsvpa -g 1 \
		-c -s 65536 -n 200 $kb >"$DIR/verbs.cli" 2>&1 ||
		say_fail "ibv_rc_pingpong client through the service"
	wait "$s" || say_fail "ibv_rc_pingpong server through the service"
	grep -h "iters in" "$DIR/verbs.cli" "$DIR/verbs.srv" |
		sed 's/^/dp_svc: ibv_rc_pingpong -c: /'
	grep -q "200 iters" "$DIR/verbs.cli" && grep -q "200 iters" "$DIR/verbs.srv" ||
		{ say_fail "ibv_rc_pingpong:"; cat "$DIR/verbs.cli" "$DIR/verbs.srv"; }
	for s in mrsvpa mrsvpx; do
		ip netns exec "$NSA" "$CTL" link del $s >/dev/null
	done
	ip netns exec "$NSB" "$CTL" link del mrsvpb >/dev/null
}
[ -n "$CTL" ] && [ -n "$RUN" ] && verbs

# The daemon dies under a waiting application: it is told.
start_server gone 5
wait_up "$DIR/gone.srv5" || say_fail "gone: server did not come up"
kill -9 "$DPID_b"
wait "$DPID_b" 2>/dev/null
DPIDS=("$DPID_a")
for i in $(seq 100); do
	grep -q "datapath service at $DIR/b.sock is gone" "$DIR/gone.srv5" &&
		break
	sleep 0.1
done
grep -q "datapath service at $DIR/b.sock is gone" "$DIR/gone.srv5" ||
	say_fail "the application was not told its daemon died"
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null

[ $fail = 0 ] || for f in "$DIR"/*.daemon; do
	echo "--- $f"
	sed 's/^/  /' "$f"
done
echo "dp_svc: $N applications per host through metaroced," \
	"$([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
