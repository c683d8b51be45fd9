#!/usr/bin/env bash
# metaroce-ctl link add/show/del as root, in a network namespace of its own:
# the sysfs view and /dev node it makes, the MTU and MAC rules, names and
# addresses in use, no permission, stale views, real devices mirrored.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
cli_own_netns

V=$METAROCE_RUNDIR/net-$(stat -L -c %i /proc/self/ns/net)/sysfs
IB=$V/class/infiniband
ip link add v0 type veth peer name v1
ip link add j0 mtu 9000 type veth peer name j1 mtu 9000
ip link add s0 mtu 300 type veth peer name s1 mtu 300
MAC_V0=$(cat /sys/class/net/v0/address)
add() { "$CTL" link add "$@"; }
node_of() { sed -n 's/^uverbs=//p' "$IB/$1/metaroce.conf"; }
val() { cat "$1" 2>/dev/null || echo "<missing $1>"; }
eq() { # DESC GOT WANT
	if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: '$2' != '$3'"; fi
}
# EUI-64 GUID of a MAC in sysfs notation.
guid_of() {
	local IFS=: m
	read -ra m <<<"$1"
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x${m[0]} ^ 2)) "${m[1]}" \
		"${m[2]}" "${m[3]}" "${m[4]}" "${m[5]}"
}

expect_ok "add mr0 on a 1500-byte veth" \
	add mr0 --port net_af_packet0,iface=v0 --ip 192.0.2.1/24
N0=$(node_of mr0)
G0=$(guid_of "$MAC_V0")
check "node name: metaroce-<netns cookie>-0" "^metaroce-$COOKIE-0$" "$N0"
eq "record: the iface's MAC" "$(grep '^mac=' "$IB/mr0/metaroce.conf")" \
	"mac=$MAC_V0"
eq "record: MTU capped to 1024" "$(grep '^mtu=' "$IB/mr0/metaroce.conf")" \
	"mtu=1024"
eq "record: udp port" "$(grep '^udp_port=' "$IB/mr0/metaroce.conf")" \
	"udp_port=4797"
eq "node_type" "$(val "$IB/mr0/node_type")" "1: CA"
eq "node_guid from the MAC" "$(val "$IB/mr0/node_guid")" "$G0"
eq "port state" "$(val "$IB/mr0/ports/1/state")" "4: ACTIVE"
eq "phys_state" "$(val "$IB/mr0/ports/1/phys_state")" "5: LinkUp"
eq "link_layer" "$(val "$IB/mr0/ports/1/link_layer")" "Ethernet"
# MR-ADDR-1: GID 0 the link-local address of the MAC (EUI-64), GID 1 the
# IPv4-mapped address, no global IPv6 GID without an IPv6 --ip.
ll_of() {
	local IFS=: m
	read -ra m <<<"$1"
	printf 'fe80:0000:0000:0000:%02x%s:%sff:fe%s:%s%s\n' \
		$((0x${m[0]} ^ 2)) "${m[1]}" "${m[2]}" "${m[3]}" "${m[4]}" "${m[5]}"
}
eq "gid 0: link-local" "$(val "$IB/mr0/ports/1/gids/0")" "$(ll_of "$MAC_V0")"
eq "gid 1: IPv4-mapped" "$(val "$IB/mr0/ports/1/gids/1")" \
	"0000:0000:0000:0000:0000:ffff:c000:0201"
eq "gid 0 type" "$(val "$IB/mr0/ports/1/gid_attrs/types/0")" "RoCE v2"
eq "gid 1 type" "$(val "$IB/mr0/ports/1/gid_attrs/types/1")" "RoCE v2"
eq "two gids" "$(ls "$IB/mr0/ports/1/gids" | tr '\n' ' ')" "0 1 "
eq "two gid types" "$(ls "$IB/mr0/ports/1/gid_attrs/types" | tr '\n' ' ')" \
	"0 1 "
# As the kernel writes it: the netdev of each GID (libibverbs' sysfs
# ibv_query_gid_ex takes its ifindex, UCX reads it for bonding).
eq "gid 0 ndev" "$(val "$IB/mr0/ports/1/gid_attrs/ndevs/0")" "v0"
eq "gid 1 ndev" "$(val "$IB/mr0/ports/1/gid_attrs/ndevs/1")" "v0"
eq "two gid ndevs" "$(ls "$IB/mr0/ports/1/gid_attrs/ndevs" | tr '\n' ' ')" \
	"0 1 "
eq "pkey 0" "$(val "$IB/mr0/ports/1/pkeys/0")" "0xffff"
eq "verbs abi_version" "$(val "$V/class/infiniband_verbs/abi_version")" "6"
eq "uverbs ibdev" "$(val "$V/class/infiniband_verbs/$N0/ibdev")" "mr0"
eq "uverbs dev" "$(val "$V/class/infiniband_verbs/$N0/dev")" "1:7"
eq "/dev node: c 1 7, 0666" \
	"$(stat -c '%F %t:%T %a' "/dev/infiniband/$N0" 2>&1)" \
	"character special file 1:7 666"
eq "view readable by all" "$(stat -c %a "$IB/mr0/node_guid")" "644"

out=$("$CTL" link show)
check "show: name and node" "^mr0: node $N0 node_guid $G0$" "$out"
check "show: ip mac mtu" \
	"^    ip 192.0.2.1/24 mac $MAC_V0 mtu 1024 udp_port 4797$" "$out"
check "show: port" "^    port 0 net_af_packet0,iface=v0$" "$out"
check "show: gid 0" \
	"^    gid 0 $(ll_of "$MAC_V0") RoCE v2 link-local fe80::" "$out"
check "show: gid 1" \
	"^    gid 1 0000:0000:0000:0000:0000:ffff:c000:0201 RoCE v2 ipv4 192.0.2.1$" \
	"$out"
check_not "show: no gid 2" "gid 2" "$out"

expect_err "name in use" "device mr0 already exists" \
	add mr0 --port net_af_packet1,iface=v1 --ip 192.0.2.2/24
expect_err "address in use" "address 192.0.2.1 is in use by device mr0" \
	add mr1 --port net_af_packet1,iface=v1 --ip 192.0.2.1/24
expect_err "MAC in use" "MAC $MAC_V0 is in use by device mr0" \
	add mr1 --port net_af_packet1,iface=v0 --ip 192.0.2.2/24
expect_err "--mtu above what the port carries" \
	"--mtu 2048: interface v1 carries at most RoCE MTU 1024" \
	add mr1 --port net_af_packet1,iface=v1 --ip 192.0.2.2/24 --mtu 2048
expect_err "netdev MTU too small" "interface s0 has MTU 300: too small" \
	add mr1 --port net_af_packet1,iface=s0 --ip 192.0.2.2/24

expect_ok "add mr1 on a 9000-byte veth" \
	add mr1 --port net_af_packet1,iface=j0 --ip 192.0.2.2/24
eq "jumbo: MTU 4096" "$(grep '^mtu=' "$IB/mr1/metaroce.conf")" "mtu=4096"
check "second node: -1" "^metaroce-$COOKIE-1$" "$(node_of mr1)"
expect_ok "add mr2: PCI port, --mtu 512, --mac, --udp-port" \
	add mr2 --port 0000:3b:00.0 --ip 192.0.2.3/24 --mtu 512 \
	--mac 02:00:00:00:00:09 --udp-port 5000
eq "mr2 record" "$(grep -E '^(port|mtu|mac|udp_port)=' "$IB/mr2/metaroce.conf" |
	tr '\n' ' ')" "port=0000:3b:00.0 mac=02:00:00:00:00:09 mtu=512 udp_port=5000 "
expect_ok "add mr3: no iface, default MAC from the address" \
	add mr3 --port net_memif0,role=server --ip 198.51.100.7/24
eq "mr3 derived MAC" "$(grep '^mac=' "$IB/mr3/metaroce.conf")" \
	"mac=02:00:c6:33:64:07"
eq "mr3 MTU 4096" "$(grep '^mtu=' "$IB/mr3/metaroce.conf")" "mtu=4096"
expect_ok "add mr4: two planes, the narrowest port caps the MTU" \
	add mr4 --port net_af_packet4,iface=j1 --port net_af_packet5,iface=v1 \
	--ip 192.0.2.4/24
eq "mr4 MTU" "$(grep '^mtu=' "$IB/mr4/metaroce.conf")" "mtu=1024"
eq "mr4 ports" "$(grep -c '^port=' "$IB/mr4/metaroce.conf")" "2"
# MR-ROUTE-4: the gateway of a port the kernel does not see.
expect_ok "add mr5: a memif port with its plane's gateway" \
	add mr5 --port net_memif5,role=server,socket=/tmp/mr5.$$ \
	--gateway 10.101.1.254 --ip 10.200.0.5/32
eq "mr5 record: gateway of plane 1" \
	"$(grep '^gateway=' "$IB/mr5/metaroce.conf")" "gateway=1,10.101.1.254"
# MR-ADDR-1: a global IPv6 address is GID 2; MR-ROUTE-4 with an IPv6
# gateway (link-local allowed) next to the IPv4 one.
expect_ok "add mr6: --ip IPv6 too, IPv6 and IPv4 gateways" \
	add mr6 --port net_memif6,role=server,socket=/tmp/mr6.$$ \
	--gateway 10.101.1.254 --gateway fe80::1 --ip 10.200.0.6/32 \
	--ip 2001:db8:6::6/64
eq "mr6 record: ip6, both gateways" \
	"$(grep -E '^(ip6|gateway)=' "$IB/mr6/metaroce.conf" | tr '\n' ' ')" \
	"ip6=2001:db8:6::6/64 gateway=1,10.101.1.254 gateway=1,fe80::1 "
eq "mr6 gid 2: the global IPv6 address" "$(val "$IB/mr6/ports/1/gids/2")" \
	"2001:0db8:0006:0000:0000:0000:0000:0006"
eq "mr6 gid 2 type" "$(val "$IB/mr6/ports/1/gid_attrs/types/2")" "RoCE v2"
out=$("$CTL" link show mr6)
check "show: gid 2" \
	"^    gid 2 2001:0db8:0006:0000:0000:0000:0000:0006 RoCE v2 ipv6 2001:db8:6::6$" \
	"$out"
check "show: ip6" "^    ip6 2001:db8:6::6/64$" "$out"
expect_err "IPv6 address in use" \
	"address 2001:db8:6::6 is in use by device mr6" \
	add mr7 --port net_memif7,socket=/tmp/mr7.$$ --ip 10.200.0.7/32 \
	--ip 2001:db8:6::6/64
expect_err "--ip link-local" "not link-local" \
	add mr7 --port net_memif7,socket=/tmp/mr7.$$ --ip 10.200.0.7/32 \
	--ip fe80::7/64
expect_err "--ip IPv6 without a prefix length" \
	"--ip '2001:db8::7': expected a global IPv6" \
	add mr7 --port net_memif7,socket=/tmp/mr7.$$ --ip 10.200.0.7/32 \
	--ip 2001:db8::7
expect_err "two IPv6 --ip" "--ip: one IPv6 address at most" \
	add mr7 --port net_memif7,socket=/tmp/mr7.$$ --ip 10.200.0.7/32 \
	--ip 2001:db8::7/64 --ip 2001:db8::8/64
expect_err "only an IPv6 --ip" "--ip ADDR/LEN \(IPv4\) is needed" \
	add mr7 --port net_memif7,socket=/tmp/mr7.$$ --ip 2001:db8::7/64
expect_err "two IPv6 gateways on a port" "one IPv6 gateway per --port" \
	add mr7 --port net_memif7,socket=/tmp/mr7.$$ --gateway fe80::1 \
	--gateway fe80::2 --ip 10.200.0.7/32
expect_ok "del mr6" "$CTL" link del mr6
expect_err "--gateway before any --port" \
	"--gateway IP follows the --port it is for" \
	add mr6 --gateway 10.0.0.1 --port net_memif6,socket=/tmp/mr6.$$ \
	--ip 10.200.0.6/32
expect_err "--gateway not an address" \
	"--gateway '10.0.0': expected the IPv4 or IPv6 address of the plane's router" \
	add mr6 --port net_memif6,socket=/tmp/mr6.$$ --gateway 10.0.0 \
	--ip 10.200.0.6/32
expect_ok "del mr5" "$CTL" link del mr5

json=$("$CTL" link show --json)
py='import json, sys
d = json.load(sys.stdin)
print(" ".join(x["name"] for x in d))
m = [x for x in d if x["name"] == "mr4"][0]
print(m["ports"], m["ip"], m["prefixlen"], m["mtu"], m["udp_port"],
      [g["type"] for g in m["gids"]], m["gids"][1]["gid"],
      [g["kind"] for g in m["gids"]])'
out=$(python3 -c "$py" <<<"$json" 2>&1)
check "json: valid, sorted" "^mr0 mr1 mr2 mr3 mr4$" "$out"
check "json: fields" "^\['net_af_packet4,iface=j1', 'net_af_packet5,iface=v1'\] 192.0.2.4 24 1024 4797 \['RoCE v2', 'RoCE v2'\] 0000:0000:0000:0000:0000:ffff:c000:0204 \['link-local', 'ipv4'\]$" "$out"
out=$("$CTL" link show mr2 --json | python3 -m json.tool 2>&1)
check "show NAME --json" '"name": "mr2"' "$out"

# No permission: a user that is not root changes nothing.
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
expect_err "add without permission" "Permission denied \(run as root\)" \
	nobody "$CTL" link add mr9 --port 0000:3b:00.2 --ip 192.0.2.9/24
expect_err "del without permission" "Permission denied \(run as root\)" \
	nobody "$CTL" link del mr0
out=$(nobody "$CTL" link show)
check "show works for any user" "^mr4: " "$out"

N1=$(node_of mr1)
expect_ok "del mr1" "$CTL" link del mr1
[ ! -e "$IB/mr1" ] && [ ! -e "$V/class/infiniband_verbs/$N1" ] &&
	[ ! -e "/dev/infiniband/$N1" ] && pass "del mr1: every trace gone" ||
	fail "del mr1 left something"
[ -e "/dev/infiniband/$N0" ] && pass "del mr1: mr0's node stays" ||
	fail "del mr1 removed mr0's node"
expect_err "del mr1 again" "no MetaRoCE device mr1" "$CTL" link del mr1
expect_ok "add mr1 again reuses node -1" \
	add mr1 --port net_af_packet1,iface=j0 --ip 192.0.2.2/24
eq "reused node" "$(node_of mr1)" "$N1"
for d in mr0 mr1 mr2 mr3 mr4; do
	expect_ok "del $d" "$CTL" link del $d
done
eq "last del: the view is gone" "$(ls -A "$METAROCE_RUNDIR")" ""
eq "last del: no node of this namespace" \
	"$(ls /dev/infiniband 2>/dev/null | grep -c "^metaroce-$COOKIE-")" "0"

# Commands run at the same time are serialized (flock): all succeed, each
# device gets its own node.
for i in 0 1 2 3; do
	"$CTL" link add mr1$i --port 0000:3b:00.$i --ip 192.0.2.1$i/24 \
		>"$TMP/par$i" 2>&1 &
done
wait
eq "parallel adds" "$(cat "$TMP"/par* | tr -d '\n')" ""
eq "parallel adds: 4 devices, 4 nodes" \
	"$(ls "$IB" | tr '\n' ' ')$(for i in 0 1 2 3; do node_of mr1$i; done |
		sort -u | wc -l)" "mr10 mr11 mr12 mr13 4"
# Leftovers of a command killed half-way are removed by the next one.
mkdir -p "$(dirname "$V")/.stage-999999/dev"
for i in 0 1 2 3; do
	"$CTL" link del mr1$i >"$TMP/par$i" 2>&1 &
done
wait
eq "parallel dels" "$(cat "$TMP"/par* | tr -d '\n')" ""
eq "parallel dels: nothing left" "$(ls -A "$METAROCE_RUNDIR")" ""

# A view left by a dead namespace whose inode this one now has: ignored by
# metaroce-run and show, replaced (with its nodes) by the next add.
expect_ok "add mr0" add mr0 --port net_af_packet0,iface=v0 --ip 192.0.2.1/24
N0=$(node_of mr0)
echo 999999999 >"$(dirname "$V")/netns_cookie"
out=$("$RUN" sh -c 'echo "SYSFS_PATH=${SYSFS_PATH-unset}"')
eq "stale view: metaroce-run leaves SYSFS_PATH alone" "$out" \
	"SYSFS_PATH=unset"
eq "stale view: show lists nothing" "$("$CTL" link show)" ""
expect_ok "add over a stale view" \
	add mr5 --port net_af_packet0,iface=v0 --ip 192.0.2.5/24
eq "stale view replaced" "$(ls "$IB")" "mr5"
eq "cookie is this namespace's" "$(cat "$(dirname "$V")/netns_cookie")" \
	"$COOKIE"
out=$("$RUN" sh -c 'echo "$SYSFS_PATH"')
eq "metaroce-run: SYSFS_PATH is the view" "$out" "$V"
expect_ok "del mr5" "$CTL" link del mr5

# Real devices (a fake host sysfs) stay visible through the view.
H=$TMP/host
R=$H/devices/pci0000:00/0000:00:03.0
mkdir -p "$R/infiniband/mlx5_0" "$R/infiniband_verbs/uverbs0" \
	"$H/class/infiniband" "$H/class/infiniband_verbs"
echo mlx5_0 >"$R/infiniband_verbs/uverbs0/ibdev"
echo 231:192 >"$R/infiniband_verbs/uverbs0/dev"
echo "1: CA" >"$R/infiniband/mlx5_0/node_type"
echo 5 >"$H/class/infiniband_verbs/abi_version"
ln -s ../../devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0 \
	"$H/class/infiniband/mlx5_0"
ln -s ../../devices/pci0000:00/0000:00:03.0/infiniband_verbs/uverbs0 \
	"$H/class/infiniband_verbs/uverbs0"
export METAROCE_HOST_SYSFS=$H
expect_err "name of a real device" "name mlx5_0 is in use by a real RDMA" \
	add mlx5_0 --port net_af_packet0,iface=v0 --ip 192.0.2.1/24
expect_ok "add mr0 beside a real device" \
	add mr0 --port net_af_packet0,iface=v0 --ip 192.0.2.1/24
eq "real device mirrored" "$(readlink "$IB/mlx5_0")" \
	"$(realpath "$R/infiniband/mlx5_0")"
eq "real uverbs mirrored" \
	"$(cat "$V/class/infiniband_verbs/uverbs0/ibdev" 2>&1)" "mlx5_0"
eq "host abi_version kept" "$(val "$V/class/infiniband_verbs/abi_version")" 5
eq "show lists only MetaRoCE devices" \
	"$("$CTL" link show | grep -c '^[^ ]')" "1"
expect_err "del of a real device" "mlx5_0 is a real RDMA device" \
	"$CTL" link del mlx5_0
mkdir -p "$R/infiniband/mlx5_1"
ln -s ../../devices/pci0000:00/0000:00:03.0/infiniband/mlx5_1 \
	"$H/class/infiniband/mlx5_1"
expect_ok "add mr1" add mr1 --port net_af_packet1,iface=j0 --ip 192.0.2.2/24
[ -L "$IB/mlx5_1" ] && pass "a real device that appeared is mirrored" ||
	fail "mlx5_1 not mirrored"
rm "$H/class/infiniband/mlx5_1"
expect_ok "del mr1" "$CTL" link del mr1
[ ! -e "$IB/mlx5_1" ] && [ -L "$IB/mlx5_0" ] &&
	pass "mirrors refreshed on del" || fail "mirrors not refreshed"
expect_ok "add by interface name" add mrk --port j1 --ip 192.0.2.9/24
eq "record: a bare interface name is the net_mrpkt port on it" \
	"$(grep '^port=' "$IB/mrk/metaroce.conf")" "port=net_mrpkt0,iface=j1"
expect_ok "del mrk" "$CTL" link del mrk
expect_err "a bare name that is no interface" "neither a vdev name" \
	add mrk --port nosuchif0 --ip 192.0.2.9/24
expect_ok "del mr0" "$CTL" link del mr0
eq "view gone with the last device" "$(ls -A "$METAROCE_RUNDIR")" ""
cli_done
