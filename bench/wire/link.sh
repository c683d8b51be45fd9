# SPDX-License-Identifier: BSD-2-Clause
# bench/wire/link.sh: sourced by run.sh and targets.sh, what both measure
# on: one veth link (MTU 9000) between two network namespaces, and the
# raw DPDK ceiling of that link (testpmd txonly -> rxonly over
# net_af_packet).
#
# wire_need NAME TOOL...    exit unless every TOOL is on PATH
# wire_link NAME TAG        make namespaces ${TAG}A$$ / ${TAG}B$$ joined
#                           by veth ${tag}a$$ / ${tag}b$$ (tag: TAG's last
#                           letter; e.g. TAG=mrw: mrwA123, mwa123),
#                           a scratch directory W=/tmp/${TAG}.XXXXXX
#                           and METAROCE_RUNDIR=$W/run, all removed on
#                           exit with every pid in PIDS; defines NSA NSB
#                           VA VB T W, inA and inB (run in a namespace)
# wire_pairs N DEVA DEVB OPTS [VAR=VALUE...]
#                           N ib_write_bw pairs at once (64 KiB, -D SECS,
#                           extra perftest OPTS, the environment VARs),
#                           servers on DEVB in NSB, clients on DEVA; prints
#                           the aggregate in Gb/s, warns of a pair that
#                           moved nothing
# wire_addr NAME NET        address the link: NET.1/24 on VA, NET.2/24 on VB
# wire_devices NAME BUILD PORT DEVA DEVB NET [MACA MACB]
#                           MetaRoCE devices DEVA in NSA and DEVB in NSB on
#                           the link's veths (PORT: net_mrpkt0, ...; "iface="
#                           is added), GIDs NET.1/24 and NET.2/24, MACs the
#                           veths' or MACA / MACB (a MAC is one device's:
#                           pairs.sh's second variant)
# testpmd_rate LEN          median per-second Rx-pps of frames of LEN
#                           bytes over the link for SECS seconds (0 when
#                           testpmd measured nothing)

wire_need() {
	local name=$1 t
	shift
	for t in "$@"; do
		command -v "$t" >/dev/null ||
			{ echo "$name: missing $t (scripts/deps.sh)" >&2; exit 1; }
	done
}

wire_link() {
	local name=$1 tag=$2 v
	v=${tag:0:1}${tag: -1}
	T=$$
	NSA=${tag}A$T
	NSB=${tag}B$T
	VA=${v}a$T
	VB=${v}b$T
	W=$(mktemp -d "/tmp/$tag.XXXXXX")
	export METAROCE_RUNDIR=$W/run
	PIDS=()
	trap wire_cleanup EXIT INT TERM
	ip netns add "$NSA" && ip netns add "$NSB" &&
		ip link add "$VA" netns "$NSA" type veth peer name "$VB" \
			netns "$NSB" &&
		ip -n "$NSA" link set "$VA" mtu 9000 up &&
		ip -n "$NSB" link set "$VB" mtu 9000 up &&
		ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up ||
		{ echo "$name: cannot build the link" >&2; exit 1; }
}

wire_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$W"
}

inA() { ip netns exec "$NSA" "$@"; }
inB() { ip netns exec "$NSB" "$@"; }

wire_addr() {
	ip -n "$NSA" addr add "$2.1/24" dev "$VA" &&
		ip -n "$NSB" addr add "$2.2/24" dev "$VB" ||
		{ echo "$1: cannot address the link" >&2; exit 1; }
}

wire_devices() {
	local name=$1 b=$2 port=$3 da=$4 db=$5 net=$6 ma=() mb=()
	[ -z "${7:-}" ] || ma=(--mac "$7")
	[ -z "${8:-}" ] || mb=(--mac "$8")
	inA "$b/utils/metaroce-ctl" link add "$da" --port "$port,iface=$VA" \
		--ip "$net.1/24" "${ma[@]}" >/dev/null &&
		inB "$b/utils/metaroce-ctl" link add "$db" \
			--port "$port,iface=$VB" --ip "$net.2/24" "${mb[@]}" \
			>/dev/null ||
		{ echo "$name: metaroce-ctl link add failed" >&2; exit 1; }
}

wire_pairs() {
	local n=$1 da=$2 db=$3 opts=$4 k sum=0 v
	local -a sp=() cp=()
	shift 4
	for k in $(seq "$n"); do
		# shellcheck disable=SC2086
		env "$@" setsid ip netns exec "$NSB" timeout 120 \
			"$B/utils/metaroce-run" ib_write_bw -d "$db" $opts \
			-p $((18600 + k)) -s 65536 -D "$SECS" -F \
			>"$W/srv.$k" 2>&1 &
		sp+=($!)
	done
	sleep 2
	for k in $(seq "$n"); do
		# shellcheck disable=SC2086
		env "$@" setsid ip netns exec "$NSA" timeout 120 \
			"$B/utils/metaroce-run" ib_write_bw -d "$da" $opts \
			-p $((18600 + k)) -s 65536 -D "$SECS" -F 10.86.0.2 \
			>"$W/cli.$k" 2>&1 &
		cp+=($!)
	done
	for k in "${cp[@]}" "${sp[@]}"; do wait "$k"; done
	for k in $(seq "$n"); do
		v=$(awk '/^ *[0-9]+ +[0-9]+ /{l=$4} END {print l + 0}' "$W/cli.$k")
		[ "$v" = 0 ] && { echo "wire_pairs: pair $k of $n moved nothing:" >&2; tail -n 5 "$W/cli.$k" "$W/srv.$k" >&2; }
		sum=$(awk -v s="$sum" -v v="$v" 'BEGIN {print s + v}')
	done
	awk -v s="$sum" 'BEGIN {printf "%.2f", s * 1048576 * 8 / 1e9}'
}

# testpmd's ring slots and mbufs: a 4214 B frame (MetaRoCE at MTU 4096)
# per slot. Mbufs must hold a whole af_packet ring slot; the options must
# come before --txpkts (testpmd checks segment lengths against the mbuf
# size as it parses).
AFP="framesz=8192,blocksz=8192,framecnt=1024"
TPO="--mbuf-size=8320 --total-num-mbufs=8192"
# One process per namespace, each on its own core (its main and forwarding
# lcores share that core; the main one only prints stats).
testpmd_rate() {
	local len=$1 rp
	# timeout sends SIGINT to testpmd itself, which then prints its
	# totals and exits (a background job would ignore SIGINT).
	inB timeout -s INT $((SECS + 4)) dpdk-testpmd --lcores=0@1,1@1 \
		--no-huge -m 512 --no-pci --no-telemetry --file-prefix="$NSB" \
		--vdev="net_af_packet0,iface=$VB,$AFP" -- $TPO \
		--forward-mode=rxonly --auto-start --stats-period=1 \
		>"$W/rx.log" 2>&1 &
	rp=$!
	sleep 2
	inA timeout -s INT "$SECS" dpdk-testpmd --lcores=0@0,1@0 --no-huge \
		-m 512 --no-pci --no-telemetry --file-prefix="$NSA" \
		--vdev="net_af_packet0,iface=$VA,$AFP" -- $TPO \
		--forward-mode=txonly --txpkts="$len" --auto-start \
		--stats-period=1 >"$W/tx.log" 2>&1
	wait "$rp" 2>/dev/null
	grep -o 'Rx-pps: *[0-9]*' "$W/rx.log" | awk '$2 > 100 {print $2}' |
		sort -n |
		awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]; else print 0}'
}
