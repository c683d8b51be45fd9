# Shared helpers of the CLI tests (sourced). Usage from a test:
#   . "$(dirname "$0")/lib.sh"; cli_init "$@"
# Arguments from meson: path of metaroce-ctl, path of metaroce-run.
# Every test gets its own METAROCE_RUNDIR; root tests run in a network
# namespace of their own (cli_own_netns) so that their /dev/infiniband
# nodes and interfaces never meet those of tests running in parallel.
set -u

CTL=
RUN=
FAILS=0
TMP=

cli_init() {
	CTL=$1
	RUN=$2
	TMP=$(mktemp -d /tmp/mrcli.XXXXXX)
	chmod 755 "$TMP"
	export METAROCE_RUNDIR=$TMP/run
	unset METAROCE_HOST_SYSFS SYSFS_PATH RDMAV_DRIVERS
	trap cli_cleanup EXIT
	COOKIE=$(netns_cookie)
}

# Extra cleanup commands a test registers (run in reverse order).
CLEANUPS=()
cli_on_exit() {
	CLEANUPS+=("$1")
}

cli_cleanup() {
	local i
	for ((i = ${#CLEANUPS[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUPS[$i]}" >/dev/null 2>&1
	done
	[ -n "$TMP" ] && rm -rf "$TMP"
}

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "SKIP: needs root (mknod, network namespaces)"
		exit 77
	fi
}

# Re-run this script inside a fresh network namespace (root only).
cli_own_netns() {
	if [ -n "${MRCLI_NETNS:-}" ]; then
		return 0
	fi
	local ns=mrcli-$(basename "$0" .sh)-$$
	if ! ip netns add "$ns"; then
		echo "SKIP: cannot create a network namespace here"
		exit 77
	fi
	# The namespace goes whatever happens, even on a timeout's SIGTERM.
	trap "ip netns del '$ns' 2>/dev/null; rm -rf '$TMP'" EXIT
	trap 'exit 143' TERM INT
	MRCLI_NETNS=$ns ip netns exec "$ns" bash "$0" "$CTL" "$RUN"
	exit $?
}

# This namespace's netns cookie: the middle part of our node names.
netns_cookie() {
	python3 -c 'import socket,struct
s=socket.socket(socket.AF_UNIX,socket.SOCK_DGRAM)
print(struct.unpack("Q",s.getsockopt(socket.SOL_SOCKET,71,8))[0])'
}

# Everything a command could change: the runtime directory (names, types,
# modes, contents) and this namespace's nodes in /dev/infiniband.
snapshot() {
	if [ -d "$METAROCE_RUNDIR" ]; then
		(cd "$METAROCE_RUNDIR" && find . -printf '%p %y %m %l\n' |
			sort && find . -type f -print0 | sort -z |
			xargs -0 -r md5sum)
	fi
	ls -l /dev/infiniband 2>/dev/null | grep -- " metaroce-$COOKIE-" || true
}

pass() { echo "ok: $*"; }
fail() {
	echo "FAIL: $*"
	FAILS=$((FAILS + 1))
}

# expect_ok DESC CMD...: succeeds.
expect_ok() {
	local desc=$1 out
	shift
	if ! out=$("$@" 2>&1); then
		fail "$desc: exit $?: $out"
		return 1
	fi
	pass "$desc"
}

# expect_err DESC PATTERN CMD...: non-zero exit, exactly one line on
# stderr matching PATTERN (grep -E), nothing changed on disk.
expect_err() {
	local desc=$1 pat=$2 before after rc err
	shift 2
	before=$(snapshot)
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	after=$(snapshot)
	err=$(cat "$TMP/err")
	if [ "$rc" -eq 0 ]; then
		fail "$desc: exit status 0 (stderr: $err)"
	elif [ "$(wc -l <"$TMP/err")" -ne 1 ]; then
		fail "$desc: stderr is not one line: $err"
	elif ! grep -Eq -- "$pat" "$TMP/err"; then
		fail "$desc: stderr '$err' does not match '$pat'"
	elif [ "$before" != "$after" ]; then
		fail "$desc: state changed:"
		diff <(echo "$before") <(echo "$after")
	else
		pass "$desc (exit $rc: $err)"
		return 0
	fi
	return 1
}

# check DESC PATTERN TEXT: TEXT contains a line matching PATTERN.
check() {
	if grep -Eq -- "$2" <<<"$3"; then
		pass "$1"
	else
		fail "$1: no line matches '$2' in:"
		echo "$3"
	fi
}

# check_not DESC PATTERN TEXT: no line of TEXT matches PATTERN.
check_not() {
	if grep -Eq -- "$2" <<<"$3"; then
		fail "$1: a line matches '$2' in:"
		echo "$3"
	else
		pass "$1"
	fi
}

cli_done() {
	if [ "$FAILS" -ne 0 ]; then
		echo "$FAILS check(s) failed"
		exit 1
	fi
	echo "all checks passed"
	exit 0
}

# --- Two emulated hosts (root): namespaces $NSA/$NSB joined by a veth
# pair, kernel addresses 10.84.0.1/.2 for the programs' TCP exchange,
# MetaRoCE devices $DEV_A (10.85.0.1) and $DEV_B (10.85.0.2). Everything
# goes on exit: processes, devices (before their namespaces: /dev nodes
# outlive a namespace), namespaces.
NSA=
NSB=
DEV_A=mra
DEV_B=mrb
TCP_A=10.84.0.1
PIDS=()
inA() { ip netns exec "$NSA" "$@"; }
inB() { ip netns exec "$NSB" "$@"; }

cli_kill_pids() {
	local p
	# Each pid is a timeout(1) process: its child first, then itself.
	for p in "${PIDS[@]}"; do
		pkill -9 -P "$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	PIDS=()
}

cli_two_hosts() {
	local tag=$$ extra=("$@")
	NSA=mrcA$tag
	NSB=mrcB$tag
	cli_on_exit "ip netns del $NSA; ip netns del $NSB"
	cli_on_exit "inA $CTL link del $DEV_A; inB $CTL link del $DEV_B"
	cli_on_exit "cli_kill_pids"
	if ! ip netns add "$NSA" || ! ip netns add "$NSB"; then
		echo "SKIP: cannot create network namespaces here"
		exit 77
	fi
	ip link add mrcva$tag netns "$NSA" type veth peer name mrcvb$tag \
		netns "$NSB" || { echo "FAIL: veth"; exit 1; }
	ip -n "$NSA" link set lo up && ip -n "$NSB" link set lo up &&
		ip -n "$NSA" link set mrcva$tag mtu 9000 up &&
		ip -n "$NSB" link set mrcvb$tag mtu 9000 up &&
		ip -n "$NSA" addr add $TCP_A/24 dev mrcva$tag &&
		ip -n "$NSB" addr add 10.84.0.2/24 dev mrcvb$tag ||
		{ echo "FAIL: veth setup"; exit 1; }
	inA "$CTL" link add $DEV_A --port net_af_packet0,iface=mrcva$tag \
		--ip 10.85.0.1/24 "${extra[@]}" &&
		inB "$CTL" link add $DEV_B --port net_af_packet0,iface=mrcvb$tag \
			--ip 10.85.0.2/24 "${extra[@]}" ||
		{ echo "FAIL: link add"; exit 1; }
}

# cli_pair LOG PORT SERVER_CMD... -- CLIENT_CMD...: the server in host A
# (waits until it listens on TCP PORT), then the client in host B, both
# through metaroce-run under timeout. Exit statuses in SRC and CRC; logs
# in $TMP/LOG.srv and $TMP/LOG.cli.
SRC=
CRC=
CLI_T=${CLI_TIMEOUT:-120}
cli_pair() {
	local log=$TMP/$1 port=$2 scmd=() spid i
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		scmd+=("$1")
		shift
	done
	shift
	inA timeout -k 5 "$CLI_T" "$RUN" "${scmd[@]}" >"$log.srv" 2>&1 &
	spid=$!
	PIDS+=("$spid")
	for i in $(seq 200); do
		inA ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	inB timeout -k 5 "$CLI_T" "$RUN" "$@" >"$log.cli" 2>&1
	CRC=$?
	wait "$spid"
	SRC=$?
}
