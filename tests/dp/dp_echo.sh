#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Two hosts = two network namespaces joined by a veth pair, each with a
# MetaRoCE device on an af_packet port; the client process sends payloads
# through lib/dp, the server process echoes them; see mrdp_peer.c.
# Usage: dp_echo.sh PATH/TO/mrdp-peer [COUNT] [IDLE_S] [MTU] [LINK_MTU]
set -u
PEER=${1:?usage: dp_echo.sh mrdp-peer [count] [idle_s] [mtu] [link_mtu]}
COUNT=${2:-3000}
IDLE=${3:-10}
MTU=${4:-4096}
LMTU=${5:-9000}

if [ "$(id -u)" != 0 ]; then
	echo "dp_echo: needs root (network namespaces); skipped"
	exit 77
fi
for t in ip unshare; do
	command -v $t >/dev/null || { echo "dp_echo: no $t; skipped"; exit 77; }
done

# shellcheck source=tests/dp/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair echo mrd "$LMTU" || {
	echo "dp_echo: cannot build the veth pair"
	exit 1
}

# The device addresses are not given to the kernel: the datapath owns them
# (it answers ARP; the kernel would answer too and send ICMP errors).
# DP_PORT_A / DP_PORT_B override the ports (e.g. memif: the link is then
# the shared-memory socket, the veth only carries the bad-record checks).
PORTA=${DP_PORT_A:-net_af_packet0,iface=$VA}
if [ -n "${DP_PORT_A:-}" ]; then
	export MRDP_TEST_NO_REOPEN=1 MRDP_TEST_NO_CAPTURE=1
fi
PORTB=${DP_PORT_B:-net_af_packet0,iface=$VB}
cat >"$DIR/a.conf" <<EOC
name=mrdpa
port=$PORTA
ip=10.77.0.1/24
mac=02:00:0a:4d:00:01
mtu=$MTU
udp_port=4797
EOC
cat >"$DIR/b.conf" <<EOC
name=mrdpb
port=$PORTB
ip=10.77.0.2/24
mac=02:00:0a:4d:00:02
mtu=$MTU
udp_port=4797
EOC

# Bad records get a clear reason and leave nothing open.
FAILS=0
expect_open() { # record-file expected-substring
	local out
	out=$(ip netns exec "$NSA" "$PEER" open "$1" 0.0.0.0 2>&1)
	if ! echo "$out" | grep -q -- "$2"; then
		echo "dp_echo: open $1: wanted '$2', got: $out"
		FAILS=$((FAILS + 1))
	else
		echo "dp_echo: open $(basename "$1"): $(echo "$out" | head -1)"
	fi
}
ip -n "$NSA" link add "mdd$$" type veth peer name "mde$$"
ip -n "$NSA" link set "mdd$$" mtu 1500 up
sed "s/^port=.*/port=net_af_packet0,iface=nosuch$$/" "$DIR/a.conf" \
	>"$DIR/bad1.conf"
sed "s/^port=.*/port=net_af_packet0,iface=mdd$$/" "$DIR/a.conf" \
	>"$DIR/bad2.conf"
sed "s/^port=.*/port=0000:3b:00.0/" "$DIR/a.conf" >"$DIR/bad3.conf"
sed "s/^port=.*/port=net_nosuchdriver0/" "$DIR/a.conf" >"$DIR/bad4.conf"
expect_open "$DIR/bad1.conf" "no interface 'nosuch$$'"
expect_open "$DIR/bad2.conf" "has MTU 1500 but RoCE MTU $MTU needs"
expect_open "$DIR/bad3.conf" "no PCI device 0000:3b:00.0"
expect_open "$DIR/bad4.conf" "could not open it"
[ -z "${DP_PORT_A:-}" ] &&
	expect_open "$DIR/a.conf" "already open in this process"

# The server computes UDP checksums (METAROCE_DP_UDP_CSUM=1), which the
# client's capture verifies; the client sends the default zero checksum
# (MR-ENC-4), which the server must accept.
METAROCE_DP_UDP_CSUM=1 ip netns exec "$NSB" "$PEER" server "$DIR/b.conf" \
	10.77.0.1 >"$DIR/server.log" 2>&1 &
SPID=$!
# Wait for the server's device to be up before the client resolves it.
for i in $(seq 100); do
	grep -q "server: up" "$DIR/server.log" 2>/dev/null && break
	if ! kill -0 "$SPID" 2>/dev/null; then break; fi
	sleep 0.1
done
ip netns exec "$NSA" "$PEER" client "$DIR/a.conf" 10.77.0.2 "$VA" \
	"$COUNT" "$IDLE" "$DIR/a.stats"
CRC=$?
wait "$SPID"
SRC=$?
SPID=
sed 's/^/  /' "$DIR/server.log"
echo "dp_echo: client exit $CRC, server exit $SRC, $FAILS bad-open checks failed"
[ "$CRC" = 0 ] && [ "$SRC" = 0 ] && [ "$FAILS" = 0 ]
