#!/usr/bin/env bash
# Stock rdma-core tools (Debian's ibv_devices, ibv_devinfo) see a device
# made by metaroce-ctl when run through metaroce-run: listed, opened and
# queried through the real libibverbs and the build's provider. Root, in a
# network namespace of its own.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
for t in ibv_devices ibv_devinfo setpriv; do
	command -v $t >/dev/null || { echo "SKIP: $t not installed"; exit 77; }
done
cli_own_netns

prov=$(dirname "$RUN")/../providers/metaroce/libmetaroce-rdmav34.so
[ -f "$prov" ] || { echo "FAIL: provider not built: $prov"; exit 1; }

ip link add v0 type veth peer name v1
ip link add j0 mtu 9000 type veth peer name j1 mtu 9000
# A fixed MAC, so the expected GUID and GIDs are literals.
ip link set v0 address 52:54:00:12:34:56
GUID=5054:00ff:fe12:3456

expect_ok "add mr0" "$CTL" link add mr0 --port net_af_packet0,iface=v0 \
	--ip 192.0.2.1/24
expect_ok "add mr1 (jumbo, --mtu 2048)" "$CTL" link add mr1 \
	--port net_af_packet1,iface=j0 --ip 192.0.2.2/24 --mtu 2048
expect_ok "add mr2 (jumbo)" "$CTL" link add mr2 \
	--port net_af_packet2,iface=j1 --ip 192.0.2.3/24

out=$("$RUN" ibv_devices 2>&1)
check "ibv_devices lists mr0 with its GUID" \
	"^ +mr0[[:space:]]+505400fffe123456$" "$out"
check "ibv_devices lists mr1" "^ +mr1[[:space:]]+[0-9a-f]{16}$" "$out"

out=$("$RUN" ibv_devinfo -v -d mr0 2>&1)
check "devinfo: hca_id" "^hca_id:	mr0$" "$out"
check "devinfo: node GUID" "node_guid:	+$GUID$" "$out"
check "devinfo: PORT_ACTIVE" "state:	+PORT_ACTIVE \(4\)" "$out"
check "devinfo: Ethernet" "link_layer:	+Ethernet" "$out"
check "devinfo: active MTU 1024 on a 1500 veth" "active_mtu:	+1024 \(3\)" \
	"$out"
# MR-ADDR-1: 0 link-local from the MAC, 1 IPv4-mapped, nothing more
# without a global IPv6 address.
check "devinfo: GID 0 link-local RoCE v2" \
	"GID\[  0\]:	+fe80::5054:ff:fe12:3456, RoCE v2$" "$out"
check "devinfo: GID 1 IPv4-mapped RoCE v2" \
	"GID\[  1\]:	+::ffff:192.0.2.1, RoCE v2$" "$out"
check_not "devinfo: no GID the datapath cannot serve" "GID\[  2\]" \
	"$out"
check_not "devinfo: no warnings" "[Ww]arning|[Ff]ailed" "$out"
# ATOMIC WRITE: bit 40 of device_cap_flags_ex (the kernel's
# IB_UVERBS_DEVICE_ATOMIC_WRITE, which ibv_devinfo 44 does not name); no
# FLUSH bits (38, 39).
check "devinfo: ATOMIC WRITE in device_cap_flags_ex" \
	"device_cap_flags_ex:	+0x1[0-3][0-9A-Fa-f]{9}$" "$out"
check "devinfo: the one flag it does not name is bit 40" \
	"Unknown flags: 0x10000000000$" "$out"

out=$("$RUN" ibv_devinfo -v -d mr1 2>&1)
check "devinfo mr1: --mtu 2048" "active_mtu:	+2048 \(4\)" "$out"
out=$("$RUN" ibv_devinfo -d mr2 2>&1)
check "devinfo mr2: 4096 on jumbo" "active_mtu:	+4096 \(5\)" "$out"

# Any user can use the devices (SYSFS_PATH is honoured when uid == euid).
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$RUN" ibv_devinfo -d mr0 2>&1)
check "non-root user opens mr0" "state:	+PORT_ACTIVE" "$out"

# The device list is in name order, the same in every run and every
# program (mr_dirorder_shim.c): programs that are not told a device open
# the first one (qperf, ibv_rc_pingpong), and the view's directory is read
# in its file system's hash order. "mq9" is made last but sorts first.
expect_ok "add mq9 (made last, sorts first)" "$CTL" link add mq9 \
	--port net_af_packet4,iface=v1 --ip 192.0.2.9/24 \
	--mac 02:00:00:00:00:09
order=
for i in 1 2 3; do
	order+="$("$RUN" ibv_devices 2>&1 | awk 'NR > 2 {printf "%s ", $1}')|"
done
check "ibv_devices lists in name order, three times alike" \
	"^(mq9 mr0 mr1 mr2 \|){3}$" "$order"
out=$("$RUN" ibv_devinfo -l 2>&1)
check "ibv_devinfo -l in name order" \
	"^4 HCAs? found:[[:space:]]+mq9[[:space:]]+mr0[[:space:]]+mr1[[:space:]]+mr2[[:space:]]*$" \
	"$(echo $out)"
expect_ok "del mq9" "$CTL" link del mq9

# A device made before the GID table change (GID 0 was the IPv4-mapped
# address, the only one): its view lists other GIDs than the provider
# serves. Refused when a program lists the devices, with what to do; a
# recreated device works.
expect_ok "add mr3" "$CTL" link add mr3 --port net_af_packet3,iface=v1 \
	--ip 192.0.2.4/24
IBV=$METAROCE_RUNDIR/net-$(stat -L -c %i /proc/self/ns/net)/sysfs/class/infiniband
cat "$IBV/mr3/ports/1/gids/1" >"$IBV/mr3/ports/1/gids/0"
rm "$IBV/mr3/ports/1/gids/1" "$IBV/mr3/ports/1/gid_attrs/types/1"
out=$("$RUN" ibv_devices 2>&1)
check_not "an old view's device is not listed" "^ +mr3[[:space:]]" "$out"
check "the others still are" "^ +mr0[[:space:]]" "$out"
check "one clear error: which GID, recreate" \
	"^metaroce: mr3: the view's GID table .* is not the device's: GID 0 is 0000:0000:0000:0000:0000:ffff:c000:0204 there, the device serves fe80:.*recreate it .*metaroce-ctl link del mr3" "$out"
out=$("$RUN" ibv_devinfo -d mr3 2>&1)
check "devinfo -d mr3 fails with the reason" "metaroce: mr3: the view's GID table" "$out"
check "link show says the view is stale" \
	"^    stale view: GID 0 is 0000:0000:0000:0000:0000:ffff:c000:0204 there, the device serves fe80:.*recreate it$" \
	"$("$CTL" link show mr3)"
check "link show -j has stale_view" '"stale_view": "GID 0 is ' \
	"$("$CTL" link show -j mr3)"
check_not "the other devices are not stale" "stale" "$("$CTL" link show mr0)"
expect_ok "del mr3" "$CTL" link del mr3
expect_ok "add mr3 again" "$CTL" link add mr3 --port net_af_packet3,iface=v1 \
	--ip 192.0.2.4/24
out=$("$RUN" ibv_devinfo -v -d mr3 2>&1)
check "the recreated mr3 works" "GID\[  0\]:	+fe80::.*, RoCE v2$" "$out"
check_not "no error for it" "the view's GID table" "$out"
expect_ok "del mr3 (end)" "$CTL" link del mr3

expect_ok "del mr1" "$CTL" link del mr1
out=$("$RUN" ibv_devices 2>&1)
check_not "deleted device not listed" "^ +mr1[[:space:]]" "$out"
check "others still listed" "^ +mr2[[:space:]]" "$out"
expect_ok "del mr0" "$CTL" link del mr0
expect_ok "del mr2" "$CTL" link del mr2
out=$("$RUN" ibv_devices 2>&1)
check_not "no device left" "^ +mr[0-9][[:space:]]" "$out"
cli_done
