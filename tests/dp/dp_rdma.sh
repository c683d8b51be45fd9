#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Two hosts = two network namespaces joined by a veth pair; in each a
# process runs a lib/core endpoint over lib/dp (mrdp_rdma.c): RDMA WRITE,
# READ, SEND and atomics between them, every byte checked.
# Usage: dp_rdma.sh PATH/TO/mrdp-rdma [MTU] [LINK_MTU]
set -u
BIN=${1:?usage: dp_rdma.sh mrdp-rdma [mtu] [link_mtu]}
MTU=${2:-4096}
LMTU=${3:-9000}

if [ "$(id -u)" != 0 ]; then
	echo "dp_rdma: needs root (network namespaces); skipped"
	exit 77
fi
command -v ip >/dev/null || { echo "dp_rdma: no ip; skipped"; exit 77; }

# shellcheck source=tests/dp/veth_pair.sh
. "$(dirname "$0")/veth_pair.sh"
veth_pair rdma mrr "$LMTU" || {
	echo "dp_rdma: cannot build the veth pair"
	exit 1
}

# DP_PORT_A / DP_PORT_B override the ports (memif, as dp_echo.sh);
# DP_DEV_A / DP_DEV_B name the kind on the veth (default net_af_packet0)
# and DP_ARGS_A / DP_ARGS_B add devargs after iface= (dp_pkt.sh).
for side in a b; do
	if [ $side = a ]; then
		N=1
		PORT=${DP_PORT_A:-${DP_DEV_A:-net_af_packet0},iface=$VA${DP_ARGS_A:-}}
	else
		N=2
		PORT=${DP_PORT_B:-${DP_DEV_B:-net_af_packet0},iface=$VB${DP_ARGS_B:-}}
	fi
	cat >"$DIR/$side.conf" <<EOC
name=mrdr$side
port=$PORT
ip=10.78.0.$N/24
mac=02:00:0a:4e:00:0$N
mtu=$MTU
udp_port=4797
EOC
done

ip netns exec "$NSB" timeout 120 "$BIN" server "$DIR/b.conf" 10.78.0.1 \
	>"$DIR/server.log" 2>&1 &
SPID=$!
for i in $(seq 100); do
	grep -q "server: up" "$DIR/server.log" 2>/dev/null && break
	kill -0 "$SPID" 2>/dev/null || break
	sleep 0.1
done
ip netns exec "$NSA" timeout 120 "$BIN" client "$DIR/a.conf" 10.78.0.2
CRC=$?
wait "$SPID"
SRC=$?
SPID=
sed 's/^/  /' "$DIR/server.log"
echo "dp_rdma: client exit $CRC, server exit $SRC"
[ "$CRC" = 0 ] && [ "$SRC" = 0 ]
