#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Only the connected peer gets in (docs/spec/transport.md MR-RSP-1), over
# the real datapath: three hosts (network namespaces) on one bridge. Host
# A's RC QP is connected to host B's; host C, another address and MAC on
# the same L2, sends A a WRITE, a READ and a FETCH_AND_ADD with the right
# QPNs and rkey, built with the project's wire encoder (mri-forge attack).
# Pass: A's memory is what B's own WRITE left, byte for byte (the atomic
# word too), C hears nothing, and A's device counted the forged packets
# as drop_peer_addr.
#
# Usage: forged.sh CTL RUN MRI_FORGE
set -u
CTL=${1:?usage: forged.sh CTL RUN MRI_FORGE}
RUN=${2:?usage}
FORGE=${3:?usage}

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (network namespaces, veth, /dev nodes)"
	exit 77
fi

TAG=$$
NSA=mrfA$TAG
NSB=mrfB$TAG
NSC=mrfC$TAG
NSS=mrfS$TAG
DEV_A=mrfa
DEV_B=mrfb
# shellcheck source=tests/integration/hosts.sh
. "$(dirname "$0")/hosts.sh"
hosts_init mri-forged
# hosts_cleanup removes A and B; the attacker and the bridge go here.
trap 'hosts_cleanup; ip netns del "$NSC" 2>/dev/null; ip netns del "$NSS" 2>/dev/null' EXIT
T=${MRI_TIMEOUT:-45}

NS_MADE=1
for n in "$NSA" "$NSB" "$NSC" "$NSS"; do
	ip netns add "$n" || die "ip netns add $n"
	ip -n "$n" link set lo up || die "lo up"
done
ip -n "$NSS" link add br0 type bridge || die "bridge"
ip -n "$NSS" link set br0 up || die "bridge up"
i=0
for n in "$NSA" "$NSB" "$NSC"; do
	i=$((i + 1))
	ip link add mrfv$i$TAG netns "$n" type veth peer name mrfp$i \
		netns "$NSS" || die "veth $i"
	ip -n "$NSS" link set mrfp$i master br0 up || die "port $i"
	ip -n "$n" link set mrfv$i$TAG up || die "link up $i"
done
# Kernel addresses for the TCP exchange; the devices have 10.87.0.0/24.
ip -n "$NSA" addr add 10.86.0.1/24 dev mrfv1$TAG || die "addr A"
ip -n "$NSB" addr add 10.86.0.2/24 dev mrfv2$TAG || die "addr B"
# The attacker lives in the devices' subnet, with its own address.
ip -n "$NSC" addr add 10.87.0.66/24 dev mrfv3$TAG || die "addr C"
inA "$CTL" link add $DEV_A --port "net_af_packet0,iface=mrfv1$TAG" \
	--ip 10.87.0.1/24 >"$W/ctl.log" 2>&1 || die "link add A: $(cat "$W/ctl.log")"
inB "$CTL" link add $DEV_B --port "net_af_packet0,iface=mrfv2$TAG" \
	--ip 10.87.0.2/24 >"$W/ctl.log" 2>&1 || die "link add B: $(cat "$W/ctl.log")"

bg_in "$NSA" "$W/target.log" timeout -k 5 "$T" stdbuf -oL "$RUN" "$FORGE" \
	target -d $DEV_A -o "$W/info"
TPID=$BG_PID
bg_in "$NSB" "$W/peer.log" timeout -k 5 "$T" stdbuf -oL "$RUN" "$FORGE" \
	peer -d $DEV_B -w "$W/info" 10.86.0.1
PPID_=$BG_PID
for _ in $(seq 300); do
	grep -q "WRITE of" "$W/peer.log" 2>/dev/null && [ -s "$W/info" ] && break
	kill -0 "$PPID_" 2>/dev/null || break
	sleep 0.1
done
grep -q "WRITE of" "$W/peer.log" || {
	cat "$W/target.log" "$W/peer.log"
	die "A and B did not connect"
}
echo "known to the attacker (dqpn sqpn rkey va atomic_rkey atomic_va): $(cat "$W/info")"
ip netns exec "$NSC" timeout 20 "$FORGE" attack -f "$W/info" 10.87.0.1 \
	>"$W/attack.log" 2>&1
ARC=$?
touch "$W/info.done"
wait "$PPID_"
PRC=$?
wait "$TPID"
TRC=$?
for f in target peer attack; do
	echo "--- $f"
	sed 's/^/  /' "$W/$f.log"
done
[ "$ARC" = 0 ] || die "the attacker was answered (or failed: $ARC)"
[ "$PRC" = 0 ] || die "peer exit $PRC"
[ "$TRC" = 0 ] || die "target exit $TRC"
inA "$CTL" stats $DEV_A --last --json >"$W/stats.json" || die "stats $DEV_A"
python3 - "$W/stats.json" <<'EOF' || die "forged packets not counted by reason"
import json, sys
d = json.load(open(sys.argv[1]))
def find(o, key):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == key and isinstance(v, int):
                yield v
            else:
                yield from find(v, key)
    elif isinstance(o, list):
        for v in o:
            yield from find(v, key)
n = max(find(d, "drop_peer_addr"), default=0)
print("target's drop_peer_addr:", n)
sys.exit(0 if n >= 9 else 1)
EOF
echo "PASS: 9 forged requests from another address: no byte changed, no answer, all counted"
