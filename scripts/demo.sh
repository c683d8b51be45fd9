#!/usr/bin/env bash
# The README's demo: what MetaRoCE is for. Installs the Debian packages,
# builds in ./build, then:
#   - metaroce-fabric builds a routed fabric of network namespaces
#     (utils/metaroce-fabric/configs/demo.conf): two hosts, four planes,
#     each plane two leaf and two spine routers (ECMP on the UDP source
#     port), 1 Gb/s links with ECN-marking queues, and 1% random loss on
#     every link direction;
#   - each host gets a MetaRoCE device with one port per plane;
#   - unmodified ib_write_bw runs between them for 24 s; plane 2 fails at
#     8 s and comes back at 16 s; the receiver's bandwidth is printed once
#     a second, in total and per plane;
#   - then MetaRoCE's own counters (metaroce-ctl stats: retransmissions,
#     SACK holes, ECN, per plane and path) and the fabric's (drops by
#     cause, ECN marks per link).
# Idempotent (a previous run's leftovers are removed first) and it cleans
# up after itself, on failure too. Needs root (namespaces, tc, BPF).
# METAROCE_DEMO_BUILD=<dir> builds elsewhere than ./build;
# METAROCE_DEMO_SECONDS=<s> the transfer's length (default 24; the plane
# fails at 1/3 and returns at 2/3 of it).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${METAROCE_DEMO_BUILD:-build}
BIN=$PWD/$BUILD/utils
CTL=$BIN/metaroce-ctl
RUN=$BIN/metaroce-run
FAB=$BIN/metaroce-fabric/metaroce-fabric
CONF=utils/metaroce-fabric/configs/demo.conf
WATCH=scripts/demo_watch.py
SECS=${METAROCE_DEMO_SECONDS:-24}
DOWN_AT=$((SECS / 3))
UP_AT=$((2 * SECS / 3))
H1=demo-h1 # namespaces made by the fabric (name demo, hosts h1 h2)
H2=demo-h2
BG=()

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: needs root (network namespaces, tc, BPF)" >&2
	exit 1
fi

cleanup() {
	local p
	for p in "${BG[@]}"; do
		kill -9 -- "-$p" 2>/dev/null || kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	BG=()
	for ns in "$H1" "$H2"; do
		ip netns list | grep -qw "$ns" || continue
		# The device before its namespace: /dev nodes outlive it.
		ip netns exec "$ns" "$CTL" link del mr0 >/dev/null 2>&1 || true
	done
	[ -x "$FAB" ] && "$FAB" -f demo down >/dev/null 2>&1 || true
	rm -f "/tmp/demo-srv.$$" "/tmp/demo-cli.$$" "/tmp/demo-events.$$"*
}

say() {
	echo
	echo "# $*"
}

# on NS CMD...: show and run a command in a host, as typed there.
on() {
	local ns=$1 tool=${2##*/}
	shift 2
	echo "[$ns]# $tool $*"
	case $tool in
	metaroce-ctl) ip netns exec "$ns" "$CTL" "$@" ;;
	*) ip netns exec "$ns" timeout -k 5 $((SECS + 60)) "$RUN" "$tool" "$@" ;;
	esac
}

scripts/deps.sh
if [ ! -f "$BUILD/build.ninja" ]; then
	meson setup "$BUILD"
fi
ninja -C "$BUILD"

cleanup
trap cleanup EXIT
trap 'exit 130' INT TERM
"$CTL" link gc >/dev/null 2>&1 || true

say "A routed fabric: 2 hosts, 4 planes, 2 leaves + 2 spines per plane, 1% loss on every link"
echo "# metaroce-fabric up $CONF"
"$FAB" up "$CONF"
"$FAB" show | grep -E '^(fabric|host)'
"$FAB" show | grep -E '^link p1/' | head -4

say "A MetaRoCE device per host: one port per plane, one address routed through every plane"
for i in 1 2; do
	ns=demo-h$i
	on "$ns" metaroce-ctl link add mr0 --port net_af_packet0,iface=p1 \
		--port net_af_packet1,iface=p2 --port net_af_packet2,iface=p3 \
		--port net_af_packet3,iface=p4 --ip 10.200.0.$i/32
done
on "$H1" ibv_devices

say "Unmodified ib_write_bw, $SECS s, host 2 -> host 1; plane 2 fails at ${DOWN_AT}s and returns at ${UP_AT}s"
echo "# metaroce-fabric set 'p2/*' down_at=$DOWN_AT up_at=$UP_AT"
setsid ip netns exec "$H1" timeout -k 5 $((SECS + 60)) "$RUN" ib_write_bw \
	-d mr0 -x 1 -F -s 65536 -D "$SECS" >"/tmp/demo-srv.$$" 2>&1 &
BG+=($!)
for _ in $(seq 300); do
	ip netns exec "$H1" ss -Hltn "sport = :18515" | grep -q . && break
	sleep 0.1
done
# The client runs in the background; the clock (and the failure) starts
# when data flows, so the healthy phase is shown however long the two
# programs take to open their devices and connect on a loaded machine.
CLIENT=(ib_write_bw -d mr0 -x 1 -F -s 65536 -D "$SECS" 10.254.1.1)
echo "[$H2]# ${CLIENT[*]}"
setsid ip netns exec "$H2" timeout -k 5 $((SECS + 60)) "$RUN" "${CLIENT[@]}" \
	>"/tmp/demo-cli.$$" 2>&1 &
BG+=($!)
if ! python3 "$WATCH" flowing "$CTL" "$H1" mr0 60; then
	echo "demo.sh: no data reached host 1 within 60 s:" >&2
	cat "/tmp/demo-cli.$$" "/tmp/demo-srv.$$" >&2
	exit 1
fi
# The watch starts now, the fabric's schedule is applied beside it (on a
# loaded machine set takes seconds) and its times are handed over when
# known.
T0=$(python3 -c 'import time; print(time.clock_gettime(time.CLOCK_MONOTONIC))')
EVENTS=/tmp/demo-events.$$
rm -f "$EVENTS"
setsid python3 "$WATCH" rate "$CTL" "$H1" mr0 $((SECS + 1)) "$T0" "@$EVENTS" &
BG+=($!)
"$FAB" set 'p2/*' down_at="$DOWN_AT" up_at="$UP_AT" >/dev/null
# The failure's times as the fabric holds them (CLOCK_MONOTONIC s).
"$FAB" show --json | python3 -c '
import json, sys
d = {l["link"]: l for l in json.load(sys.stdin)["links"]}["p2/h2>l2"]
print("%s:plane 2 down,%s:plane 2 back" % (d["down_from_s"], d["down_until_s"]))
' >"$EVENTS.tmp" && mv "$EVENTS.tmp" "$EVENTS"
wait "${BG[2]}" || true
wait "${BG[1]}" || true
grep -E '^ *(#bytes|[0-9])' "/tmp/demo-cli.$$" || cat "/tmp/demo-cli.$$"
wait "${BG[0]}" || true
BG=()
rm -f "/tmp/demo-srv.$$" "/tmp/demo-cli.$$" "$EVENTS"

say "MetaRoCE's counters on the sender (host 2): metaroce-ctl stats mr0 --last"
python3 "$WATCH" summary "$CTL" "$H2" mr0
say "... and on the receiver (host 1)"
python3 "$WATCH" summary "$CTL" "$H1" mr0

say "The fabric's counters: metaroce-fabric stats (host links of plane 1 and 2)"
"$FAB" stats | grep -E '^(link|p[12]/(h[12]>l[12]|l[12]>h[12]))'

on "$H1" metaroce-ctl link del mr0
on "$H2" metaroce-ctl link del mr0
echo "# metaroce-fabric down"
"$FAB" -f demo down
echo
echo "demo.sh: done"
