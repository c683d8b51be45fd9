#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Several processes share one device (mrdp_steer.c): on each of two hosts
# (namespaces joined by one veth pair) N processes open the SAME device
# record on the same interface; process k of host A runs mrdp-rdma's
# client against process k of host B (WRITE, READ, SEND, atomics, every
# byte checked), all N pairs at once. Each process claims QPN slot k:
#   - steered: every process must pass, its planes must say "steered":1,
#     and its engine must have seen no packet for a QPN it does not have
#     (drop_unknown_qp: a frame of another process reaching it); its
#     frames polled = its own packets + ARP + the kernel's IPv6 ND;
#   - plain (the control, run too): the same QPNs without the filter;
#     the pairs still pass (each engine drops what is not its own), and
#     drop_unknown_qp must be nonzero, or this test could not tell.
# DP_DEV names the port kind (default net_af_packet0; dp-share-mrpkt:
# net_mrpkt0, whose super-frames the filter sees by their first segment)
# and DP_ARGS adds devargs after iface= (dp-share-mrpkt-block: ,rx=block,
# where a block filled before the filter must not reach the engine).
# Usage: dp_share.sh PATH/TO/mrdp-rdma [N]
set -u
BIN=${1:?usage: dp_share.sh mrdp-rdma [n]}
N=${2:-2}

if [ "$(id -u)" != 0 ]; then
	echo "dp_share: needs root (network namespaces); skipped"
	exit 77
fi
command -v ip >/dev/null || { echo "dp_share: no ip; skipped"; exit 77; }

# shellcheck source=tests/dp/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair share mrs 9000 || {
	echo "dp_share: cannot build the veth pair"
	exit 1
}
for side in a b; do
	n=1
	[ $side = b ] && n=2
	cat >"$DIR/$side.conf" <<EOC
name=mrds$side
port=${DP_DEV:-net_af_packet0},iface=$([ $side = a ] && echo "$VA" || echo "$VB")${DP_ARGS:-}
ip=10.79.0.$n/24
mac=02:00:0a:4f:00:0$n
mtu=4096
udp_port=4797
EOC
done

# A number from a datapath JSON line: field NAME (first occurrence).
jnum() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }
jn() { local v; v=$(jnum "$1" "$2"); echo "${v:-0}"; }

# run MODE (steer|plain): all N pairs at once; 0 if every process passed.
run() {
	local mode=$1 k pids=() rc=0 sd
	for k in $(seq "$N"); do
		sd=
		[ "$mode" = steer ] && sd=$DIR/steer
		mkdir -p "$DIR/steerA" "$DIR/steerB"
		env MRDP_TEST_STEER_SLOT=$k ${sd:+MRDP_TEST_STEER_DIR=${sd}B} \
			ip netns exec "$NSB" timeout 120 "$BIN" server \
			"$DIR/b.conf" 10.79.0.1 >"$DIR/$mode.srv$k" 2>&1 &
		pids+=($!)
	done
	for k in $(seq "$N"); do
		for i in $(seq 100); do
			grep -q "server: up" "$DIR/$mode.srv$k" 2>/dev/null && break
			sleep 0.1
		done
	done
	for k in $(seq "$N"); do
		sd=
		[ "$mode" = steer ] && sd=$DIR/steer
		env MRDP_TEST_STEER_SLOT=$k ${sd:+MRDP_TEST_STEER_DIR=${sd}A} \
			ip netns exec "$NSA" timeout 120 "$BIN" client \
			"$DIR/a.conf" 10.79.0.2 >"$DIR/$mode.cli$k" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || rc=1
	done
	return $rc
}

fail=0
drops_plain=0
for mode in steer plain; do
	run_ok=0
	run $mode && run_ok=1
	# The unsteered control (the old mode) failed once in about ten runs
	# on the loaded test bed, every pair at once with no packet arriving
	# (not understood yet; never seen steered): one retry, said aloud.
	if [ $run_ok = 0 ] && [ $mode = plain ]; then
		echo "dp_share: plain: a process failed; the control again:"
		grep -h "FAILED\|no WRITE" "$DIR"/plain.* | sed 's/^/  /'
		run $mode && run_ok=1
	fi
	if [ $run_ok = 0 ]; then
		echo "dp_share: $mode: a process failed"
		for f in "$DIR/$mode".*; do
			echo "--- $f"
			sed 's/^/  /' "$f"
		done
		fail=1
		continue
	fi
	for f in "$DIR/$mode".srv* "$DIR/$mode".cli*; do
		grep -o 'datapath .*' "$f" | head -1 >"$f.json"
		eng=$(grep -o 'drop_unknown_qp=[0-9]*' "$f" | head -1 | cut -d= -f2)
		eng=${eng:-0}
		frames=$(jnum "$f.json" rx_frames)
		pkts=$(jnum "$f.json" rx_pkts)
		arp=$(($(jnum "$f.json" arp_req_rx) + $(jnum "$f.json" arp_reply_rx)))
		st=$(jnum "$f.json" steered)
		echo "dp_share: $mode $(basename "$f"): rx_frames=$frames" \
			"rx_pkts=$pkts arp=$arp drop_unknown_qp=$eng steered=$st" \
			"rx_blocks=$(jn "$f.json" rx_blocks)"
		# IPv6 neighbour discovery and other host frames reach every
		# process by design: the kernel's own frames on the link,
		# dropped as other ethertypes, ND not about us (arp) or not
		# ours.
		v6=$(($(jn "$f.json" not_ipv4) + $(jn "$f.json" arp) +
			$(jn "$f.json" not_ours) + $(jn "$f.json" short) +
			$(jn "$f.json" ip_header)))
		# rx=block: the frames came in blocks (the mode is on).
		if [[ ${DP_ARGS:-} == *rx=block* ]] &&
			[ "$(jn "$f.json" rx_blocks)" = 0 ]; then
			echo "dp_share: FAIL: $(basename "$f"): rx=block," \
				"but rx_blocks 0"
			fail=1
		fi
		if [ "$mode" = steer ]; then
			if [ "$st" != 1 ] || [ "$eng" != 0 ] ||
				[ "$frames" -gt $((pkts + arp + v6)) ]; then
				echo "dp_share: FAIL: $(basename "$f") saw" \
					"frames that were not its own"
				sed 's/^/  /' "$f"
				fail=1
			fi
		else
			drops_plain=$((drops_plain + eng))
		fi
	done
done
if [ "$drops_plain" = 0 ] && [ "$fail" = 0 ]; then
	echo "dp_share: FAIL: without steering no process saw another's" \
		"frames: the processes did not share the interface"
	fail=1
fi
echo "dp_share: $N processes per host, $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
