# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Sourced by the two-host integration scripts (two_hosts.sh, afxdp.sh,
# clients.sh): the scratch directory, the runtime directory, the cleanup
# of background programs, devices and namespaces, and small helpers.
# The caller sets NSA, NSB, DEV_A, DEV_B and CTL, then calls
# hosts_init PREFIX, then hosts_link MTU (or sets NS_MADE=1 before it
# creates the namespaces itself).

hosts_init() { # PREFIX of the scratch directory's name
	W=$(mktemp -d "/tmp/$1.XXXXXX")
	chmod 755 "$W"
	export METAROCE_RUNDIR=$W/run
	unset SYSFS_PATH RDMAV_DRIVERS METAROCE_HOST_SYSFS
	PIDS=()
	NS_MADE=
	trap hosts_cleanup EXIT
	trap 'exit 143' TERM INT
}

# Kill and reap every background program (bg_in). Each pid leads its own
# process group: timeout(1), the program and whatever it started go
# together (killing timeout alone left servers polling in a deleted
# namespace).
hosts_stop_programs() {
	local p
	for p in "${PIDS[@]}"; do
		kill -9 -- "-$p" 2>/dev/null
		kill -9 "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
}

hosts_cleanup() {
	hosts_stop_programs
	if [ -n "$NS_MADE" ]; then
		# Devices first: their /dev nodes outlive a namespace.
		ip netns exec "$NSA" "$CTL" link del "$DEV_A" >/dev/null 2>&1
		ip netns exec "$NSB" "$CTL" link del "$DEV_B" >/dev/null 2>&1
		ip netns del "$NSA" 2>/dev/null
		ip netns del "$NSB" 2>/dev/null
	fi
	rm -rf "$W"
}

# hosts_link MTU: namespaces NSA and NSB joined by veth VA / VB, both ends
# up at MTU, loopback up in each.
hosts_link() {
	local n ns v
	NS_MADE=1
	ip netns add "$NSA" || die "ip netns add $NSA"
	ip netns add "$NSB" || die "ip netns add $NSB"
	ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB" ||
		die "veth"
	for n in A B; do
		ns=NS$n
		v=V$n
		ip -n "${!ns}" link set lo up || die "lo up"
		ip -n "${!ns}" link set "${!v}" mtu "$1" up || die "link up"
	done
}

die() {
	echo "FAIL: $*"
	exit 1
}

inA() { ip netns exec "$NSA" "$@"; }
inB() { ip netns exec "$NSB" "$@"; }

# bg_in NS LOG CMD...: CMD in namespace NS in the background, in a
# session of its own (a background job of a script leads no process
# group, so setsid does not fork and $! is the group), output to LOG;
# its pid in BG_PID and in PIDS.
bg_in() {
	local ns=$1 log=$2
	shift 2
	setsid ip netns exec "$ns" "$@" >"$log" 2>&1 &
	BG_PID=$!
	PIDS+=("$BG_PID")
}
