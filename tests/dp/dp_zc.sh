#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Zero-copy transmit between two hosts (two network namespaces joined by a
# veth pair, af_packet ports): mrdp-zc WRITEs a seeded script of random
# data from SGE lists that cross MR boundaries and READs it back, every
# byte compared on both sides, once with zero-copy (the default) and once
# with METAROCE_DP_ZEROCOPY=0; each run checks the zero-copy counters say
# which it was. A third run starts WRITEs before the server's address is
# resolved: the frames that wait for ARP must be made contiguous.
# Usage: dp_zc.sh PATH/TO/mrdp-zc [MTU] [LINK_MTU]
set -u
BIN=${1:?usage: dp_zc.sh mrdp-zc [mtu] [link_mtu]}
MTU=${2:-4096}
LMTU=${3:-9000}

if [ "$(id -u)" != 0 ]; then
	echo "dp_zc: needs root (network namespaces); skipped"
	exit 77
fi
command -v ip >/dev/null || { echo "dp_zc: no ip; skipped"; exit 77; }

# shellcheck source=tests/dp/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair zc mrz "$LMTU" || {
	echo "dp_zc: cannot build the veth pair"
	exit 1
}

# conf PORT_A PORT_B: the two device records.
conf() {
	local side N PORT
	for side in a b; do
		if [ $side = a ]; then N=1; PORT=$1; else N=2; PORT=$2; fi
		cat >"$DIR/$side.conf" <<EOC
name=mrz$side
port=$PORT
ip=10.79.0.$N/24
mac=02:00:0a:4f:00:0$N
mtu=$MTU
udp_port=4797
EOC
	done
}

# run ZEROCOPY_VALUE: one server + one client; 0 when both pass.
run() {
	local zc=$1 crc src
	echo "== METAROCE_DP_ZEROCOPY=${zc:-(unset)}"
	if [ -n "$zc" ]; then export METAROCE_DP_ZEROCOPY=$zc; else
		unset METAROCE_DP_ZEROCOPY; fi
	: >"$DIR/server.log"
	ip netns exec "$NSB" timeout 120 "$BIN" server "$DIR/b.conf" \
		10.79.0.1 >"$DIR/server.log" 2>&1 &
	SPID=$!
	for i in $(seq 100); do
		grep -q "server: up" "$DIR/server.log" 2>/dev/null && break
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	ip netns exec "$NSA" timeout 120 "$BIN" client "$DIR/a.conf" \
		10.79.0.2 2>&1 | grep -v '"device"'
	crc=${PIPESTATUS[0]}
	wait "$SPID"
	src=$?
	SPID=
	grep -v '"device"' "$DIR/server.log" | sed 's/^/  /'
	echo "dp_zc: client exit $crc, server exit $src"
	[ "$crc" = 0 ] && [ "$src" = 0 ]
}

conf "net_af_packet0,iface=$VA" "net_af_packet0,iface=$VB"
run "" && run 0 && MRDP_ZC_NO_RESOLVE=1 run "" || exit 1
# memif in copy mode also takes chains (one memif buffer per frame).
SOCK=$DIR/memif.sock
conf "net_memif0,role=client,socket=$SOCK,socket-abstract=no" \
	"net_memif0,role=server,socket=$SOCK,socket-abstract=no"
echo "== memif"
run ""
