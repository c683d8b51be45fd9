#!/usr/bin/env bash
# The README's demo: install the Debian dependencies, build in ./build, and
# emulate two hosts as network namespaces joined by a veth pair, with a
# MetaRoCE device mr0 in each. Then rdma-core's and perftest's own,
# unmodified programs run over it: ibv_devices, ibv_devinfo -v, ib_write_bw
# (server on one host, client on the other), ibv_rc_pingpong, and
# metaroce-ctl stats shows the device's counters.
# Idempotent (a previous run's leftovers are removed first) and it cleans
# up after itself, on failure too. Needs root (namespaces, /dev nodes).
# METAROCE_DEMO_BUILD=<dir> builds elsewhere than ./build;
# METAROCE_DEMO_TIMEOUT=<s> bounds each program (default 120).
set -euo pipefail
cd "$(dirname "$0")/.."

NS1=mr-demo-h1
NS2=mr-demo-h2
IF1=mr-demo-v1 # in $NS1
IF2=mr-demo-v2 # in $NS2
TCP1=10.86.0.1 # kernel addresses: the programs' out-of-band TCP exchange
TCP2=10.86.0.2
BUILD=${METAROCE_DEMO_BUILD:-build}
BIN=$PWD/$BUILD/utils
CTL=$BIN/metaroce-ctl
RUN=$BIN/metaroce-run
T=${METAROCE_DEMO_TIMEOUT:-120}
BG=() # background programs (timeout processes)

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: needs root (network namespaces, /dev/infiniband nodes)" >&2
	exit 1
fi

cleanup() {
	local p ns
	for p in "${BG[@]}"; do
		pkill -9 -P "$p" 2>/dev/null || true
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	BG=()
	for ns in "$NS1" "$NS2"; do
		ip netns list | grep -qw "$ns" || continue
		# The device before its namespace: /dev nodes outlive it.
		[ -x "$CTL" ] && ip netns exec "$ns" "$CTL" link del mr0 \
			>/dev/null 2>&1 || true
		ip netns del "$ns" || true
	done
}

# on NS CMD...: run a command in a namespace, shown as a user would type
# it there; verbs programs get timeout and metaroce-run.
on() {
	local ns=$1 tool=${2##*/}
	shift 2
	echo
	echo "[$ns]# $tool $*"
	case $tool in
	metaroce-ctl) ip netns exec "$ns" "$CTL" "$@" ;;
	*) ip netns exec "$ns" timeout -k 5 "$T" "$RUN" "$tool" "$@" ;;
	esac
}

# on_bg NS CMD...: the same, in the background (a server).
on_bg() {
	local ns=$1 tool=$2
	shift 2
	echo
	echo "[$ns]# $tool $* &"
	ip netns exec "$ns" timeout -k 5 "$T" "$RUN" "$tool" "$@" &
	BG+=($!)
}

# Wait until a server in NS1 listens on a TCP port.
listening() {
	local i
	for i in $(seq 300); do
		ip netns exec "$NS1" ss -Hltn "sport = :$1" | grep -q . &&
			return 0
		sleep 0.1
	done
	echo "demo.sh: no server listening on port $1" >&2
	return 1
}

scripts/deps.sh
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD"
fi
ninja -C "$BUILD"

cleanup
trap cleanup EXIT
trap 'exit 130' INT TERM
# Nodes and views that dead namespaces of earlier runs left behind. gc
# refuses (and the demo goes on) where some process cannot be inspected.
"$CTL" link gc || echo "demo.sh: link gc skipped; continuing"

ip netns add "$NS1"
ip netns add "$NS2"
ip link add "$IF1" netns "$NS1" type veth peer name "$IF2" netns "$NS2"
ip -n "$NS1" link set lo up
ip -n "$NS2" link set lo up
ip -n "$NS1" link set "$IF1" mtu 9000 up
ip -n "$NS2" link set "$IF2" mtu 9000 up
ip -n "$NS1" addr add "$TCP1/24" dev "$IF1"
ip -n "$NS2" addr add "$TCP2/24" dev "$IF2"

on "$NS1" metaroce-ctl link add mr0 --port "net_af_packet0,iface=$IF1" \
	--ip 192.0.2.1/24
on "$NS2" metaroce-ctl link add mr0 --port "net_af_packet0,iface=$IF2" \
	--ip 192.0.2.2/24
on "$NS1" metaroce-ctl link show
on "$NS1" ibv_devices
on "$NS1" ibv_devinfo -v -d mr0

on_bg "$NS1" ib_write_bw -d mr0 -x 1 -F -n 200 -s 65536
listening 18515
on "$NS2" ib_write_bw -d mr0 -x 1 -F -n 200 -s 65536 "$TCP1"
wait "${BG[0]}"
BG=()

# While the pingpong runs, metaroce-ctl stats shows the live counters of
# host 1's device (once the counters file shows traffic).
on_bg "$NS1" ibv_rc_pingpong -d mr0 -g 1 -n 1000
listening 18515
on_bg "$NS2" ibv_rc_pingpong -d mr0 -g 1 -n 1000 "$TCP1"
for i in $(seq 100); do
	ip netns exec "$NS1" "$CTL" stats mr0 --json 2>/dev/null |
		grep -q '"rx_pkts":[1-9]' && break
	sleep 0.1
done
# (A fast run may be over already: then the last counters.)
on "$NS1" metaroce-ctl stats mr0 || on "$NS1" metaroce-ctl stats mr0 --last
wait "${BG[0]}"
wait "${BG[1]}"
BG=()

# The programs have ended: --last shows what the last one left.
on "$NS1" metaroce-ctl stats mr0 --last
on "$NS1" metaroce-ctl link del mr0
on "$NS2" metaroce-ctl link del mr0
echo
echo "demo.sh: done (namespaces $NS1 and $NS2 are removed on exit)"
