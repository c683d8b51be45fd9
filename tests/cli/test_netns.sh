#!/usr/bin/env bash
# Hosts emulated as network namespaces each see their own device: two
# namespaces joined by a veth pair, a device named mr0 in each, and
# metaroce-run ibv_devices in each lists only its own.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
command -v ibv_devices >/dev/null || { echo "SKIP: no ibv_devices"; exit 77; }

H1=mrcli-h1-$$
H2=mrcli-h2-$$
# Devices first (their /dev nodes outlive a namespace), then namespaces.
cli_on_exit "ip netns del $H1; ip netns del $H2"
cli_on_exit "ip netns exec $H1 $CTL link del mr0; ip netns exec $H2 $CTL link del mr0"
ip netns add $H1 && ip netns add $H2 ||
	{ echo "SKIP: cannot create network namespaces here"; exit 77; }
ip link add mrc$$a netns $H1 address 52:54:00:00:00:01 type veth \
	peer name mrc$$b netns $H2 address 52:54:00:00:00:02 ||
	{ echo "FAIL: veth"; exit 1; }
in1() { ip netns exec $H1 "$@"; }
in2() { ip netns exec $H2 "$@"; }

expect_ok "h1: add mr0" in1 "$CTL" link add mr0 \
	--port net_af_packet0,iface=mrc$$a --ip 192.0.2.1/24
expect_ok "h2: add mr0 (same name, other namespace)" in2 "$CTL" link add mr0 \
	--port net_af_packet0,iface=mrc$$b --ip 192.0.2.2/24

o1=$(in1 "$RUN" ibv_devices 2>&1)
o2=$(in2 "$RUN" ibv_devices 2>&1)
check "h1 sees its mr0" "^ +mr0[[:space:]]+505400fffe000001$" "$o1"
check_not "h1 does not see h2's device" "505400fffe000002" "$o1"
check "h2 sees its mr0" "^ +mr0[[:space:]]+505400fffe000002$" "$o2"
check_not "h2 does not see h1's device" "505400fffe000001" "$o2"
eq() { [ "$2" = "$3" ] && pass "$1" || fail "$1: '$2' != '$3'"; }
eq "one device each" "$(grep -c '^ *mr' <<<"$o1") $(grep -c '^ *mr' <<<"$o2")" \
	"1 1"

n1=$(in1 "$CTL" link show --json | sed -n 's/.*"node": "\([^"]*\)".*/\1/p')
n2=$(in2 "$CTL" link show --json | sed -n 's/.*"node": "\([^"]*\)".*/\1/p')
[ -n "$n1" ] && [ -n "$n2" ] && [ "$n1" != "$n2" ] &&
	[ -c "/dev/infiniband/$n1" ] && [ -c "/dev/infiniband/$n2" ] &&
	pass "distinct /dev nodes: $n1 $n2" || fail "nodes: '$n1' '$n2'"
o=$(in1 "$RUN" ibv_devinfo -d mr0 2>&1)
check "h1: ibv_devinfo opens its mr0" "state:	+PORT_ACTIVE" "$o"
o=$(in2 "$RUN" ibv_devinfo -v -d mr0 2>&1)
check "h2: its own GID" "GID\[  1\]:	+::ffff:192.0.2.2, RoCE v2" "$o"

expect_ok "h1: del mr0" in1 "$CTL" link del mr0
o2=$(in2 "$RUN" ibv_devices 2>&1)
check "h2 unaffected by h1's del" "^ +mr0[[:space:]]+505400fffe000002$" "$o2"
[ ! -e "/dev/infiniband/$n1" ] && [ -c "/dev/infiniband/$n2" ] &&
	pass "h1's node gone, h2's stays" || fail "nodes after del"
expect_ok "h2: del mr0" in2 "$CTL" link del mr0
eq "no view left" "$(ls -A "$METAROCE_RUNDIR")" ""
cli_done
