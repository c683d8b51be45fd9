#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Verbs clients beyond perftest and rdma-core's examples, unmodified, between
# two hosts: two network namespaces joined by a veth pair, one MetaRoCE
# device in each, every program its own process started through
# metaroce-run (server in host A, client in host B).
#
# Usage: clients.sh CTL RUN CASE
#   qperf  qperf's RDMA tests (RC send/receive, WRITE, READ, atomics with
#          its value checks, UD), each for 2 s; qperf addresses ports by LID
#          (no GRH), see providers/metaroce/xlate.h.
#   ucx    ucx_info lists rc_verbs and ud_verbs on the device; ucx_perftest
#          UCP tag matching and atomics over rc_verbs, UCT put and get.
#   ucx_ud ucx_perftest over ud_verbs alone: UCP tag matching, UCT active
#          messages.
#   lid    ibv_rc/ud/srq_pingpong without -g: LID addressing, no GRH.
# Each program must exit 0 and report nonzero numbers. Exit 77 (skip) when
# not root or when the case's programs are not installed
# (scripts/deps.sh installs them).
#
# Everything it creates (namespaces, veth, devices, runtime dir, processes)
# goes on exit, whatever the exit path. Every program runs under timeout.
set -u
CTL=${1:?usage: clients.sh CTL RUN CASE}
RUN=${2:?usage}
CASE=${3:?usage}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, veth, /dev nodes)"
	exit 77
fi
case $CASE in
qperf) NEED=(qperf) ;;
ucx | ucx_ud) NEED=(ucx_info ucx_perftest) ;;
lid) NEED=(ibv_rc_pingpong ibv_ud_pingpong ibv_srq_pingpong) ;;
*)
	echo "FAIL: unknown case '$CASE'"
	exit 1
	;;
esac
for p in "${NEED[@]}"; do
	if ! command -v "$p" >/dev/null; then
		echo "SKIP: $p is not installed (scripts/deps.sh)"
		exit 77
	fi
done

TAG=$$
NSA=mrcA$TAG
NSB=mrcB$TAG
VA=mrcva$TAG
VB=mrcvb$TAG
TCP_A=10.84.0.1
# One name on both hosts: ucx_perftest's server opens the device the
# client names (-d), as on a cluster of identical machines.
DEV=mr0
DEV_A=$DEV
DEV_B=$DEV
# shellcheck source=tests/integration/hosts.sh
. "$(dirname "$0")/hosts.sh"
hosts_init mrc-int

hosts_link 9000
# Kernel addresses carry the clients' own TCP exchange; the devices have
# their own subnet (LIDs 1 and 2: the host parts of 10.85.0.1/24, .2/24).
ip -n "$NSA" addr add $TCP_A/24 dev "$VA" || die "addr"
ip -n "$NSB" addr add 10.84.0.2/24 dev "$VB" || die "addr"
inA "$CTL" link add $DEV --port "net_af_packet0,iface=$VA" \
	--ip 10.85.0.1/24 >"$W/ctl.log" 2>&1 || die "link add A: $(cat "$W/ctl.log")"
inB "$CTL" link add $DEV --port "net_af_packet0,iface=$VB" \
	--ip 10.85.0.2/24 >"$W/ctl.log" 2>&1 || die "link add B: $(cat "$W/ctl.log")"

# Limit of one program: well inside the meson timeout, so that a hang is
# reported here, with the logs.
T=${MRI_TIMEOUT:-60}

show() {
	echo "--- $1 ($2)"
	sed 's/^/  /' "$2"
}

# serve LOG TCPPORT ENV... -- CMD...: start a server in host A, wait until
# it listens (or died). Sets SPID.
SPID=
serve() {
	local log=$1 port=$2 env=()
	shift 2
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	bg_in "$NSA" "$log" env "${env[@]}" timeout -k 5 "$T" \
		stdbuf -oL -eL "$RUN" "$@"
	SPID=$BG_PID
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	show "server log" "$log"
	die "server did not listen on port $port"
}

# client LOG ENV... -- CMD...: run a client in host B; its status in CRC.
CRC=
client() {
	local log=$1 env=()
	shift
	while [ "$1" != -- ]; do
		env+=("$1")
		shift
	done
	shift
	inB env "${env[@]}" timeout -k 5 "$T" stdbuf -oL -eL "$RUN" "$@" \
		>"$log" 2>&1
	CRC=$?
	[ "$CRC" = 124 ] && echo "(124: killed by timeout $T s)"
}

# The server's exit status, once it has ended.
server_done() {
	local src
	wait "$SPID"
	src=$?
	[ "$src" = 0 ] || { show "server log" "$1"; die "server exit status $src"; }
}

QP=19766
qperf_case() {
	local t f
	# Send/receive, RDMA WRITE and READ, atomics (msg rate, and the ver_
	# tests that check every returned value), UD; blocking on completion
	# channels (qperf's default) and one run polling (-cp1).
	local tests=(rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw
		rc_rdma_write_lat rc_compare_swap_mr rc_fetch_add_mr
		ver_rc_compare_swap ver_rc_fetch_add ud_bw ud_lat)
	echo "server (host A): qperf -lp $QP"
	serve "$W/q.srv" $QP -- qperf -lp $QP
	for t in "${tests[@]}" "-cp1 rc_lat"; do
		f=$W/q.cli
		# shellcheck disable=SC2086 # "-cp1 rc_lat": two words
		client "$f" -- qperf $TCP_A -lp $QP -t 2 -i $DEV:1 $t
		show "qperf $t" "$f"
		[ "$CRC" = 0 ] || die "qperf $t: exit status $CRC"
		! grep -qiE 'err|fail' "$f" || die "qperf $t: errors reported"
		# "    bw  =  284 MB/sec": every figure positive, at least one.
		awk '/^ +[a-z_]+ += +[0-9.]+ [A-Za-z\/]+$/ {
			n++; if (!($3 > 0)) bad = 1 }
			END { exit !(n > 0 && !bad) }' "$f" ||
			die "qperf $t: no result or a zero result"
	done
	client "$W/q.quit" -- qperf $TCP_A -lp $QP quit
	server_done "$W/q.srv"
	show "qperf server" "$W/q.srv"
	! grep -qiE 'err|fail' "$W/q.srv" || die "qperf server reported errors"
	echo "ok: ${#tests[@]} qperf tests and -cp1 rc_lat, nonzero results"
}

# ucx_perftest's result line: "Final: ITERS p50 avg overall BW BW RATE RATE"
# (latency tests: no bandwidth, the rate columns still count messages).
check_final() {
	local f=$1 n=$2
	grep -q '^Final:' "$f" || die "$f: no Final line"
	awk -v n="$n" '/^Final:/ { exit !($2 == n && $3 > 0 && $9 > 0) }' \
		"$f" || die "$f: not $n iterations at a positive rate"
}

ucx_run() {
	local tls=$1 n=$2
	shift 2
	echo "ucx_perftest $* (UCX_TLS=$tls)"
	serve "$W/u.srv" 13337 UCX_TLS="$tls" UCX_NET_DEVICES=$DEV:1 \
		-- ucx_perftest -p 13337
	client "$W/u.cli" UCX_TLS="$tls" UCX_NET_DEVICES=$DEV:1 \
		-- ucx_perftest $TCP_A -p 13337 -n "$n" -w 10 "$@"
	show "client" "$W/u.cli"
	[ "$CRC" = 0 ] || { show "server" "$W/u.srv"; die "client exit $CRC"; }
	server_done "$W/u.srv"
	! grep -qE 'UCX +(ERROR|WARN)' "$W/u.cli" "$W/u.srv" ||
		{ show "server" "$W/u.srv"; die "UCX reported errors"; }
	check_final "$W/u.cli" "$n"
	echo "ok: $(grep '^Final:' "$W/u.cli")"
}

# ucx_info -d lists both verbs transports on the device's memory domain
# (rc_mlx5, dc_mlx5 and ud_mlx5 are for mlx5 hardware only).
ucx_info_check() {
	local md t f
	inB "$RUN" ucx_info -d >"$W/info" 2>&1 || die "ucx_info -d failed"
	md=$(awk -v d="# Memory domain: $DEV" '$0 == d {on = 1; print; next}
		/^# Memory domain:/ {on = 0} on' "$W/info")
	echo "$md"
	for t in rc_verbs ud_verbs; do
		echo "$md" | grep -qE "^# +Transport: $t\$" ||
			die "ucx_info -d: no $t for $DEV"
	done
	echo "$md" | grep -qE "^# +Device: $DEV:1\$" ||
		die "ucx_info -d: no device $DEV:1"
	# UCX reads the GID types from /sys/class/infiniband itself, without
	# SYSFS_PATH: metaroce-run's shim serves them from the view.
	f=/sys/class/infiniband/$DEV/ports/1
	[ "$(inB "$RUN" cat $f/gid_attrs/types/0 $f/lid)" = "RoCE v2
0x2" ] || die "$f: not the view's GID type and LID"
	echo "ok: $f/gid_attrs/types/0 is RoCE v2, lid 0x2 (the view)"
}

ucx_case() {
	ucx_info_check
	# UCP over rc_verbs (ud_verbs carries the wireup): eager and
	# rendezvous (64 KiB), latency, atomics; UCT put and get.
	ucx_run rc_verbs,ud_verbs,self 300 -t tag_bw -s 65536
	ucx_run rc_verbs,ud_verbs,self 500 -t tag_bw -s 1024
	ucx_run rc_verbs,ud_verbs,self 300 -t tag_lat -s 8
	ucx_run rc_verbs,ud_verbs,self 100 -t ucp_fadd -s 8
	ucx_run rc_verbs,ud_verbs,self 300 -t put_bw -d $DEV:1 -x rc_verbs \
		-D zcopy -s 65536
	ucx_run rc_verbs,ud_verbs,self 300 -t get -d $DEV:1 -x rc_verbs \
		-D zcopy -s 65536
}

# UCX's own reliability over UD datagrams: UCP tag matching over
# ud_verbs alone, UCT active messages. UCX checks the destination GID in
# the GRH of every datagram it receives (UCX_UD_VERBS_ETH_DGID_CHECK).
ucx_ud_case() {
	ucx_run ud_verbs,self 300 -t tag_bw -s 65536
	ucx_run ud_verbs,self 500 -t am_bw -d $DEV:1 -x ud_verbs \
		-D bcopy -s 1024
}

lid_case() {
	local t f
	for t in ibv_rc_pingpong ibv_ud_pingpong ibv_srq_pingpong; do
		echo "$t -d $DEV -n 100 (no -g: LIDs, no GRH)"
		serve "$W/p.srv" 18515 -- $t -d $DEV -n 100
		client "$W/p.cli" -- $t -d $DEV -n 100 $TCP_A
		show "client" "$W/p.cli"
		[ "$CRC" = 0 ] || die "$t client exit status $CRC"
		server_done "$W/p.srv"
		for f in "$W/p.srv" "$W/p.cli"; do
			grep -q 'remote address: LID 0x000[12],' "$f" ||
				die "$f: the peer's LID is not 1 or 2"
			grep -Eq '^100 iters in [0-9.]+ seconds' "$f" ||
				die "$f: no '100 iters' line"
			grep -E 'bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec' \
				"$f" | awk '{exit !($(NF - 1) > 0)}' ||
				die "$f: no positive rate"
		done
	done
	echo "ok: three pingpongs over LIDs"
}

case $CASE in
qperf) qperf_case ;;
ucx) ucx_case ;;
ucx_ud) ucx_ud_case ;;
lid) lid_case ;;
esac
echo "PASS: $CASE"
