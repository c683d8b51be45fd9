#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Two hosts = two network namespaces joined by a veth pair, one MetaRoCE
# device in each (metaroce-ctl), and one unmodified verbs program per host,
# each its own process started through metaroce-run: the server in host A,
# the client in host B. Both must exit 0 and print sane results.
#
# Usage: two_hosts.sh CTL RUN CASE [MRI_VERBS]
#   CASE: ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_atomic_bw
#         rc_pingpong ud_pingpong srq_pingpong uc_pingpong
#         verbs_loopback verbs_hosts verbs_rtr verbs_bad_rkey verbs_mw
#         verbs_peer_gone gids nccl
#   MRI_VERBS: the project's own verbs program (mri-verbs), for verbs_*.
#
# Everything it creates (namespaces, veth, devices, runtime dir, processes)
# goes on exit, whatever the exit path. Every program runs under timeout.
set -u
CTL=${1:?usage: two_hosts.sh CTL RUN CASE [MRI_VERBS]}
RUN=${2:?usage}
CASE=${3:?usage}
VERBS=${4:-}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, veth, /dev nodes)"
	exit 77
fi

TAG=$$
NSA=mriA$TAG
NSB=mriB$TAG
VA=mriva$TAG
VB=mrivb$TAG
# Kernel addresses carry the out-of-band TCP exchange (as perftest does
# on real hosts); the MetaRoCE devices have their own subnet.
TCP_A=10.82.0.1
DEV_A=mria
DEV_B=mrib
# shellcheck source=tests/integration/hosts.sh
. "$(dirname "$0")/hosts.sh"
hosts_init mri-int

hosts_link 9000
ip -n "$NSA" addr add $TCP_A/24 dev "$VA" || die "addr"
ip -n "$NSB" addr add 10.82.0.2/24 dev "$VB" || die "addr"
# Each device has all three kinds of GID (routing.md MR-ADDR-1): 0 the
# link-local fe80:: of its MAC, 1 its IPv4 address, 2 its global IPv6.
inA "$CTL" link add $DEV_A --port "net_af_packet0,iface=$VA" \
	--ip 10.83.0.1/24 --ip 2001:db8:83::1/64 >"$W/ctl.log" 2>&1 ||
	die "link add A: $(cat "$W/ctl.log")"
inB "$CTL" link add $DEV_B --port "net_af_packet0,iface=$VB" \
	--ip 10.83.0.2/24 --ip 2001:db8:83::2/64 >"$W/ctl.log" 2>&1 ||
	die "link add B: $(cat "$W/ctl.log")"

# Limits: generous for a loaded 2-core machine, each well inside the
# meson timeout so that a hang is reported here, with the logs.
T=${MRI_TIMEOUT:-150}

# serve LOG TCPPORT CMD...: start the server in host A, wait until it
# listens (or died).
SPID=
serve() {
	local log=$1 port=$2
	shift 2
	bg_in "$NSA" "$log" timeout -k 5 "$T" stdbuf -oL -eL "$RUN" "$@"
	SPID=$BG_PID
	for _ in $(seq 200); do
		inA ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && return 0
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "--- server log"
	cat "$log"
	die "server did not listen on port $port"
}

show() {
	echo "--- $1 ($2)"
	sed 's/^/  /' "$2"
}

# client_server LOG_PREFIX TCPPORT SERVER_CMD... -- CLIENT_CMD...: run both,
# record their exit statuses in SRC / CRC.
SRC=
CRC=
client_server() {
	local pre=$1 port=$2 scmd=() ccmd=() t0 t1
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		scmd+=("$1")
		shift
	done
	shift
	ccmd=("$@")
	echo "server (host A): ${scmd[*]}"
	echo "client (host B): ${ccmd[*]}"
	serve "$W/$pre.srv" "$port" "${scmd[@]}"
	t0=$(date +%s.%N)
	inB timeout -k 5 "$T" stdbuf -oL -eL "$RUN" "${ccmd[@]}" >"$W/$pre.cli" 2>&1
	CRC=$?
	wait "$SPID"
	SRC=$?
	t1=$(date +%s.%N)
	show "server log" "$W/$pre.srv"
	show "client log" "$W/$pre.cli"
	echo "client exit $CRC, server exit $SRC," \
		"$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}') s"
	if [ "$CRC" = 124 ] || [ "$SRC" = 124 ]; then
		echo "(124: killed by timeout $T s)"
	fi
	[ "$CRC" = 0 ] || die "client exit status $CRC"
	[ "$SRC" = 0 ] || die "server exit status $SRC"
}

# perftest result rows: "#bytes #iterations ..." lines.
rows() { awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+/' "$1"; }

# check_bw FILE ITERS SIZES...: one row per size, with the iterations and
# a positive average bandwidth at the largest sizes.
check_bw() {
	local f=$1 it=$2 s got
	shift 2
	got=$(rows "$f" | awk '{print $1}' | tr '\n' ' ')
	[ "$got" = "$* " ] || die "$f: sizes '$got', expected '$* '"
	rows "$f" | awk -v it="$it" '$2 != it {exit 1}' ||
		die "$f: a row without $it iterations"
	# perftest converts cycles to seconds with a CPU clock it measures at
	# start; under load that can fail ("Correlation coefficient r^2 ...
	# < 0.9") and every bandwidth then prints as 0: the rows above show
	# the iterations completed, only the figure is missing.
	if grep -q 'Correlation coefficient r^2' "$f"; then
		echo "note: $(basename "$f"): perftest could not measure its" \
			"CPU clock (load): bandwidth not checked"
		return
	fi
	# Bandwidth of a handful of tiny messages can print as 0.00; the
	# sum of all rows and the largest size must not.
	rows "$f" | awk '{s += $4} END {exit !(s > 0)}' ||
		die "$f: zero bandwidth"
	rows "$f" | tail -1 | awk '{exit !($4 > 0)}' ||
		die "$f: zero bandwidth at the largest size"
	echo "ok: $(basename "$f"): $# sizes, $it iterations each, BW > 0"
}

ALL_SIZES=$(awk 'BEGIN {for (s = 2; s <= 8388608; s *= 2) printf "%d ", s}')
PERF=(-x 0 -F)

perftest_bw() {
	local tool=$1 n=$2
	shift 2
	client_server perf 18515 "$tool" -d $DEV_A "${PERF[@]}" -n "$n" "$@" \
		-- "$tool" -d $DEV_B "${PERF[@]}" -n "$n" "$@" $TCP_A
}

# pingpong TOOL ITERS [ARGS...]: -g 0 unless ARGS name the GID (PP_GID).
PP_GID=(-g 0)
pingpong() {
	local tool=$1 n=$2 f
	shift 2
	client_server pp 18515 "$tool" -d $DEV_A "${PP_GID[@]}" -n "$n" "$@" \
		-- "$tool" -d $DEV_B "${PP_GID[@]}" -n "$n" "$@" $TCP_A
	for f in "$W/pp.srv" "$W/pp.cli"; do
		grep -Eq "^$n iters in [0-9.]+ seconds" "$f" ||
			die "$f: no '$n iters' line"
		grep -E 'bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec' "$f" |
			awk '{exit !($(NF - 1) > 0)}' || die "$f: no positive rate"
	done
	echo "ok: both sides did $n iterations at a positive rate"
}

need_verbs() {
	[ -n "$VERBS" ] && [ -x "$VERBS" ] || die "no mri-verbs program given"
}

case $CASE in
ib_write_bw | ib_read_bw | ib_send_bw)
	# All sizes 2 B .. 8 MiB; few iterations (the stack is slow today).
	perftest_bw "$CASE" 5 -a
	check_bw "$W/perf.cli" 5 $ALL_SIZES
	if [ "$CASE" = ib_send_bw ]; then
		check_bw "$W/perf.srv" 5 $ALL_SIZES
	else
		# The passive side prints the last size only.
		check_bw "$W/perf.srv" 5 8388608
	fi
	;;
ib_atomic_bw)
	# Two runs within the one limit.
	T=$((T / 2))
	perftest_bw ib_atomic_bw 200
	check_bw "$W/perf.cli" 200 8
	check_bw "$W/perf.srv" 200 8
	perftest_bw ib_atomic_bw 200 -A CMP_AND_SWAP
	check_bw "$W/perf.cli" 200 8
	check_bw "$W/perf.srv" 200 8
	;;
ib_write_lat)
	for s in 2 4096 65536; do
		perftest_bw ib_write_lat 100 -s $s
		for f in "$W/perf.cli" "$W/perf.srv"; do
			# #bytes #iterations t_min t_max t_typical ...
			[ "$(rows "$f" | awk '{print $1, $2}')" = "$s 100" ] ||
				die "$f: no row '$s 100'"
			rows "$f" | awk '{exit !($3 > 0 && $5 > 0)}' ||
				die "$f: latency not positive"
		done
		echo "ok: ib_write_lat -s $s: $(rows "$W/perf.cli")"
	done
	;;
rc_pingpong)
	# Polling, then sleeping on CQ events (req_notify, completion channel).
	pingpong ibv_rc_pingpong 100 -c
	pingpong ibv_rc_pingpong 100 -c -e
	;;
ud_pingpong)
	pingpong ibv_ud_pingpong 100
	;;
uc_pingpong)
	# UC (MR-UC-*): 4096-byte SENDs are four packets at the path MTU of
	# 1024; polling, then CQ events. The veth loses nothing, so every
	# message arrives.
	pingpong ibv_uc_pingpong 100
	pingpong ibv_uc_pingpong 100 -e
	;;
srq_pingpong)
	pingpong ibv_srq_pingpong 100
	;;
nccl)
	# NCCL's IB transport replayed (mri-nccl, next to mri-verbs): two
	# ranks of host A over its device's loopback, through metaroce-run
	# (whose shim serves the GID type file NCCL reads from /sys).
	need_verbs
	nccl=$(dirname "$VERBS")/mri-nccl
	[ -x "$nccl" ] || die "no $nccl"
	echo "host A: mri-nccl $DEV_A 20"
	inA timeout -k 5 "$T" "$RUN" "$nccl" $DEV_A 20 >"$W/nccl.log" 2>&1
	rc=$?
	show "mri-nccl" "$W/nccl.log"
	[ $rc = 0 ] || die "mri-nccl exit $rc"
	grep -q '^ok: mri-nccl' "$W/nccl.log" || die "mri-nccl: no ok line"
	;;
gids)
	# Every GID index the devices list works (MR-ADDR-1..3: link-local
	# IPv6, IPv4, global IPv6) with every perftest and rdma-core example
	# (-x N, -g N), and so do their defaults; an index the device does
	# not list is refused at once, with nothing left half-made.
	ga=$(inA "$RUN" ibv_devinfo -v -d $DEV_A | sed -n 's/^.*GID\[ *\([0-9]*\)\]:.*/\1/p')
	gb=$(inB "$RUN" ibv_devinfo -v -d $DEV_B | sed -n 's/^.*GID\[ *\([0-9]*\)\]:.*/\1/p')
	[ -n "$ga" ] && [ "$ga" = "$gb" ] || die "GID tables: A '$ga', B '$gb'"
	[ "$(echo $ga)" = "0 1 2" ] || die "GID indexes '$(echo $ga)', want 0 1 2"
	echo "GID indexes listed: $(echo $ga)"
	inA "$RUN" ibv_devinfo -v -d $DEV_A | grep 'GID\['
	for g in $ga; do
		PP_GID=(-g "$g")
		for pp in ibv_rc_pingpong ibv_ud_pingpong ibv_uc_pingpong \
			ibv_srq_pingpong; do
			pingpong $pp 10
		done
		PERF=(-x "$g" -F)
		for bw in ib_write_bw ib_send_bw ib_read_bw; do
			perftest_bw $bw 10 -s 4096
			check_bw "$W/perf.cli" 10 4096
		done
		for lat in ib_send_lat ib_write_lat ib_read_lat; do
			perftest_bw $lat 10 -s 64
			[ "$(rows "$W/perf.cli" | awk '{print $1, $2}')" = "64 10" ] ||
				die "$lat -x $g: no row '64 10'"
		done
		echo "ok: GID $g: 4 examples, 3 bandwidth and 3 latency tests"
	done
	# Defaults: perftest picks its GID itself; the examples without -g
	# address by LID (clients.sh: lid covers that at length).
	PERF=(-F)
	perftest_bw ib_write_bw 10 -s 4096
	check_bw "$W/perf.cli" 10 4096
	perftest_bw ib_send_lat 10 -s 64
	PP_GID=()
	pingpong ibv_rc_pingpong 10
	pingpong ibv_ud_pingpong 10
	bad=$(($(echo "$ga" | wc -l)))
	for tool in ibv_rc_pingpong ibv_ud_pingpong; do
		inB timeout -k 5 20 "$RUN" $tool -d $DEV_B -g $bad $TCP_A \
			>"$W/bad.cli" 2>&1
		rc=$?
		show "$tool -g $bad (not listed)" "$W/bad.cli"
		[ $rc != 0 ] && [ $rc != 124 ] ||
			die "$tool -g $bad: exit $rc, expected a quick failure"
		grep -qi 'gid' "$W/bad.cli" ||
			die "$tool -g $bad: no word of the GID in its error"
	done
	# perftest connects first, then reads its GID: the server with the
	# bad index fails, its good client sees the peer go.
	bg_in "$NSA" "$W/bad.srv" timeout -k 5 20 "$RUN" ib_write_bw \
		-d $DEV_A -x $bad -F
	SPID=$BG_PID
	sleep 1
	inB timeout -k 5 20 "$RUN" ib_write_bw -d $DEV_B -x 1 -F $TCP_A \
		>"$W/bad.cli" 2>&1
	wait "$SPID"
	rc=$?
	show "ib_write_bw -x $bad (not listed), server" "$W/bad.srv"
	[ $rc != 0 ] && [ $rc != 124 ] ||
		die "ib_write_bw -x $bad: exit $rc, expected a quick failure"
	echo "ok: GID indexes $(echo $ga), defaults, and a bad index"
	;;
verbs_loopback)
	need_verbs
	# Two seeds: two different sequences of sizes, SGEs and opcodes.
	for seed in 0x6d72692d76657262 12345; do
		echo "loopback (host A): mri-verbs loopback -d $DEV_A -s $seed"
		inA timeout -k 5 $((T / 2)) "$RUN" "$VERBS" loopback \
			-d $DEV_A -s $seed >"$W/lo.log" 2>&1
		rc=$?
		show "mri-verbs loopback" "$W/lo.log"
		[ $rc = 0 ] || die "mri-verbs loopback exit status $rc"
	done
	;;
verbs_hosts | verbs_bad_rkey | verbs_rtr | verbs_mw)
	need_verbs
	c=data
	[ "$CASE" = verbs_bad_rkey ] && c=bad_rkey
	[ "$CASE" = verbs_mw ] && c=mw
	[ "$CASE" = verbs_rtr ] && c=rtr
	client_server verbs 18600 "$VERBS" server -d $DEV_A -c $c \
		-- "$VERBS" client -d $DEV_B -c $c $TCP_A
	;;
verbs_peer_gone)
	need_verbs
	echo "server (host A): mri-verbs server -c peer_gone (killed -9 later)"
	serve "$W/gone.srv" 18600 "$VERBS" server -d $DEV_A -c peer_gone
	bg_in "$NSB" "$W/gone.cli" timeout -k 5 "$T" "$RUN" "$VERBS" client \
		-d $DEV_B -c peer_gone $TCP_A
	CPID=$BG_PID
	# The server announces its pid once a transfer has worked; then it
	# vanishes as a crashed host would.
	for _ in $(seq 600); do
		grep -q '^server: pid [0-9]* ready to die' "$W/gone.srv" && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	vp=$(sed -n 's/^server: pid \([0-9]*\) ready to die.*/\1/p' "$W/gone.srv")
	[ -n "$vp" ] || { show "server log" "$W/gone.srv"; die "server not ready"; }
	kill -9 "$vp"
	echo "killed the server process (pid $vp) with SIGKILL"
	wait "$SPID"
	SRC=$?
	wait "$CPID"
	CRC=$?
	show "server log" "$W/gone.srv"
	show "client log" "$W/gone.cli"
	echo "client exit $CRC, server exit $SRC"
	GCRC=$CRC
	GSRC=$SRC
	# A host that lost a process to SIGKILL serves the next one.
	echo "after the crash, a new server on host A:"
	client_server verbs 18600 "$VERBS" server -d $DEV_A -s 7 \
		-- "$VERBS" client -d $DEV_B -s 7 $TCP_A
	[ "$GCRC" = 0 ] || die "client exit status $GCRC"
	[ "$GSRC" = 137 ] || die "server exit status $GSRC (expected 137: SIGKILL)"
	;;
*)
	die "unknown case '$CASE'"
	;;
esac
echo "PASS: $CASE"
