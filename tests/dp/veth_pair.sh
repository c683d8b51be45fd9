# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
# Sourced by dp_echo.sh, dp_rdma.sh and dp_zc.sh: two hosts = two network
# namespaces joined by a veth pair, removed again on exit.
#
# veth_pair NAME TAG LINK_MTU: namespaces ${TAG}A<pid> and ${TAG}B<pid>
# (NSA, NSB) joined by veths ${TAG}a<pid> / ${TAG}b<pid> (VA, VB) at
# LINK_MTU with lo up in both, a scratch directory DIR
# (/tmp/mrdp-NAME.*), and SPID, a server pid the cleanup kills if set.
# Returns non-zero when the link cannot be made.

veth_pair_cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	rm -rf "$DIR"
}

veth_pair() {
	local name=$1 tag=$2 lmtu=$3

	NSA=${tag}A$$
	NSB=${tag}B$$
	VA=${tag}a$$
	VB=${tag}b$$
	SPID=
	DIR=$(mktemp -d "/tmp/mrdp-$name.XXXXXX") || return 1
	trap veth_pair_cleanup EXIT INT TERM
	ip netns add "$NSA" &&
		ip netns add "$NSB" &&
		ip link add "$VA" netns "$NSA" type veth peer name "$VB" \
			netns "$NSB" &&
		ip -n "$NSA" link set "$VA" mtu "$lmtu" up &&
		ip -n "$NSB" link set "$VB" mtu "$lmtu" up &&
		ip -n "$NSA" link set lo up &&
		ip -n "$NSB" link set lo up
}
