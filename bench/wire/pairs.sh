#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/pairs.sh: several processes per host sharing one device
# (issue 13: 4 ib_write_bw pairs at least 0.9 x one pair), on one veth link
# between two namespaces (bench/wire/link.sh), in one interleaved run:
# per repetition 1 pair, then N pairs (wire_pairs: 64 KiB, -D SECS), the
# aggregate in Gb/s and its ratio to the 1 pair of the same repetition,
# with the load. PERF=DIR: during the last repetition's 1 pair and its
# first N pairs, perf record -a -g -e cpu-clock for PERF_SECS (3) seconds
# after 4 s of warm-up into DIR/perf.<pairs>.data; printed after the
# table: the pairs' processes' share of all samples and each stage's share
# of theirs.
# Root. Ports: WIRE_PORT (default net_mrpkt0).
# CONFS="LABEL|PORT[|BUILD[|ENV]] ...": variants side by side in one run,
# each on devices of its own (PORT, e.g. net_mrpkt0,rx=block; BUILD
# default BUILD_DIR; ENV: VAR=VALUE[,VAR=VALUE] for both sides' processes,
# e.g. METAROCE_DP_RX_HOLD_US=0); every repetition runs each variant's 1 pair and N pairs in
# turn, so they share the machine's minutes. Without CONFS one variant,
# "-|WIRE_PORT|BUILD_DIR".
# Usage: bench/wire/pairs.sh [BUILD_DIR] [SECS] [REPS] [N...]
#   (default: build 5 3 4)
#   e.g. CONFS="frame|net_mrpkt0 block|net_mrpkt0,rx=block" \
#        nice -n 5 bench/wire/pairs.sh build 5 2 4 8
set -u
cd "$(dirname "$0")/../.." || exit 1
B=$(cd "${1:-build}" 2>/dev/null && pwd) || {
	echo "pairs.sh: no build directory ${1:-build}" >&2
	exit 1
}
SECS=${2:-5}
REPS=${3:-3}
shift $(($# < 3 ? $# : 3))
NS=("$@")
[ ${#NS[@]} -gt 0 ] || NS=(4)
WIRE_PORT=${WIRE_PORT:-net_mrpkt0}
PERF=${PERF:-}
PERF_SECS=${PERF_SECS:-3}
[ "$(id -u)" = 0 ] || { echo "pairs.sh: needs root" >&2; exit 1; }
. bench/wire/link.sh
wire_need pairs.sh ib_write_bw
[ -z "$PERF" ] || wire_need pairs.sh perf
# The variants: LABEL, PORT, BUILD of each, by index.
CLAB=() CPORT=() CB=() CENV=()
for c in ${CONFS:-"-|$WIRE_PORT"}; do
	IFS='|' read -r lab port cb cenv <<<"$c"
	[ -n "$lab" ] && [ -n "$port" ] || {
		echo "pairs.sh: CONFS entry '$c' is not LABEL|PORT[|BUILD[|ENV]]" >&2
		exit 1
	}
	cb=$(cd "${cb:-$B}" 2>/dev/null && pwd) || {
		echo "pairs.sh: no build directory in '$c'" >&2
		exit 1
	}
	CLAB+=("$lab") CPORT+=("$port") CB+=("$cb") CENV+=("${cenv//,/ }")
done
wire_link pairs.sh mrq
# wire_pairs' clients connect to 10.86.0.2
wire_addr pairs.sh 10.86.0
# Devices mrqaI / mrqbI for variant I: GIDs 10.87.I.1 and .2 and, past
# the first, MACs of their own (an address and a MAC are one device's).
for i in "${!CLAB[@]}"; do
	mac=()
	[ "$i" = 0 ] ||
		mac=("$(printf '02:00:0a:57:%02x:01' "$i")" "$(printf '02:00:0a:57:%02x:02' "$i")")
	wire_devices pairs.sh "${CB[$i]}" "${CPORT[$i]}" "mrqa$i" "mrqb$i" \
		"10.87.$i" "${mac[@]}"
done
load() { cut -d' ' -f1 /proc/loadavg; }

profile() { # PAIRS: in the background while the pairs run
	sleep 4
	perf record -a -g -e cpu-clock -e sched:sched_switch \
		-o "$PERF/perf.$1.data" -- \
		sleep "$PERF_SECS" >/dev/null 2>&1
}

stages() { # perf script of one profile -> the pairs' stages
	perf script -i "$1" -F comm,event,ip,sym 2>/dev/null | python3 -c "$(
		cat <<'PY'
import collections, sys
# a sample goes to the first stage (in this order) that a frame of its
# stack names: a wake-up inside the receive softirq is a wake-up
RULES = [
    ("switch/sleep (schedule, ppoll/futex wait)", ("__schedule", "finish_task_switch", "schedule_hrtimeout", "asm_sysvec_reschedule_ipi")),
    ("wake-ups (try_to_wake_up, sock readable)", ("try_to_wake_up", "sock_def_readable", "sock_def_write_space", "wake_up_q")),
    ("kernel rx (tpacket_rcv, veth, softirq)", ("tpacket_rcv", "net_rx_action", "__netif_receive_skb", "veth_xmit")),
    ("kernel tx (sendmmsg)", ("__sys_sendmmsg", "packet_sendmsg", "packet_snd", "__sendmmsg")),
    ("poll calls that did not sleep (ppoll, sock_poll)", ("ppoll", "do_sys_poll", "sock_poll", "ep_item_poll")),
    ("crc32c", ("crc32c",)),
    ("core (mr_*)", ("mr_",)),
    ("datapath (mrdp_*, rte_*)", ("mrdp_", "rte_", "stack_enqueue", "stack_dequeue")),
    ("locks (futex, lll)", ("lll_lock", "futex", "pthread_mutex")),
]
def cls(stack):
    for name, keys in RULES:
        for f in stack:
            if any(k in f for k in keys):
                return name
    return "other"
# the pairs' progress threads are mrdp-<device> (mrqa*, mrqb*): not
# another program named mrdp-*
ours = ("mrdp-mrq", "ib_write_bw")
tot = collections.Counter(); allc = 0; switches = 0
comm = None; ev = ""; stack = []
def flush():
    global allc, switches
    if comm is None: return
    if "sched_switch" in ev:
        switches += comm.startswith(ours)
        return
    allc += 1
    if comm.startswith(ours):
        tot[cls(stack)] += 1
for line in sys.stdin:
    if not line.strip():
        flush(); comm = None; stack = []; continue
    if not line[0].isspace():
        f = line.split()
        comm, ev, stack = f[0], " ".join(f[1:]), []
    else:
        p = line.split(None, 1)
        stack.append(p[-1].strip())
flush()
n = sum(tot.values())
print("samples: all %d, the pairs' processes %d (%.0f%%); their threads switched out %d times" % (allc, n, 100.0 * n / max(allc, 1), switches))
for k, v in tot.most_common():
    print("  %5.1f%%  %s" % (100.0 * v / max(n, 1), k))
PY
	)"
}

echo "command: PERF=${PERF:-} CONFS=\"${CONFS:-}\" bench/wire/pairs.sh ${B#"$PWD"/} $SECS $REPS ${NS[*]} (WIRE_PORT=$WIRE_PORT)"
for i in "${!CLAB[@]}"; do
	echo "variant ${CLAB[$i]}: port ${CPORT[$i]}, build ${CB[$i]#"$PWD"/}${CENV[$i]:+, env ${CENV[$i]}}"
done
echo
echo "| rep | variant | pairs | aggregate Gb/s | x 1 pair | load |"
echo "| --- | --- | --- | --- | --- | --- |"
[ -z "$PERF" ] || mkdir -p "$PERF"
for r in $(seq "$REPS"); do
	last=
	[ -z "$PERF" ] || [ "$r" != "$REPS" ] || last=1
	for i in "${!CLAB[@]}"; do
		B=${CB[$i]}
		pp=
		[ -z "$last" ] || { profile "$i.1" & pp=$!; }
		# shellcheck disable=SC2086
		one=$(wire_pairs 1 "mrqa$i" "mrqb$i" "" ${CENV[$i]})
		[ -z "$pp" ] || wait "$pp"
		echo "| $r | ${CLAB[$i]} | 1 | $one | 1 | $(load) |"
		for n in "${NS[@]}"; do
			pp=
			[ -z "$last" ] || [ "$n" != "${NS[0]}" ] ||
				{ profile "$i.$n" & pp=$!; }
			# shellcheck disable=SC2086
			agg=$(wire_pairs "$n" "mrqa$i" "mrqb$i" "" ${CENV[$i]})
			[ -z "$pp" ] || wait "$pp"
			ratio=$(awk -v a="$agg" -v b="$one" 'BEGIN {if (b+0 > 0) printf "%.2f", a / b; else print "-"}')
			echo "| $r | ${CLAB[$i]} | $n | $agg | $ratio | $(load) |"
		done
	done
done
[ -n "$PERF" ] || exit 0
for i in "${!CLAB[@]}"; do
	for n in 1 "${NS[0]}"; do
		echo
		echo "${CLAB[$i]}: $n pair(s), the last repetition, perf record -a -g -e cpu-clock -e sched:sched_switch, $PERF_SECS s:"
		stages "$PERF/perf.$i.$n.data"
	done
done
