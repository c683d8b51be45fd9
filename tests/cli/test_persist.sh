#!/usr/bin/env bash
# Devices that outlive a reboot (mr_ctl_persist.h): link add --persist
# writes /etc/metaroce/NAME.conf ($METAROCE_CONFDIR here), link del
# --persisted removes the devices and keeps the records (the service's
# stop), link restore makes them again (its start), link del NAME
# --persist removes both. Root, in a network namespace of its own.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
cli_own_netns
export METAROCE_CONFDIR=$TMP/etc
ip link add p0 type veth peer name p1
names() { "$CTL" link show | sed -n 's/^\([^ :]*\): node.*/\1/p' | tr '\n' ' '; }
eq() { [ "$2" = "$3" ] && pass "$1" || fail "$1: '$2' != '$3'"; }

expect_ok "add --persist" "$CTL" link add mrp0 --port net_af_packet0,iface=p0 \
	--ip 192.0.2.1/24 --mtu 1024 --opt paths=3 --persist
expect_ok "add (not persisted)" "$CTL" link add mrp9 --port net_af_packet0,iface=p1 \
	--ip 192.0.2.9/24
rec=$(cat "$METAROCE_CONFDIR/mrp0.conf" 2>&1)
check "record: name" '^name=mrp0$' "$rec"
check "record: port" '^port=net_af_packet0,iface=p0$' "$rec"
check "record: mtu" '^mtu=1024$' "$rec"
check "record: knob" '^opt\.paths=3$' "$rec"
check_not "record: no /dev node name" '^uverbs=' "$rec"
eq "only the persisted device has a record" "$(ls "$METAROCE_CONFDIR")" "mrp0.conf"
expect_err "add --persist over an existing record" \
	"mrp0.conf exists: device mrp0 was persisted before" \
	"$CTL" link add mrp0 --port net_af_packet1,iface=p1 --ip 192.0.2.2/24 --persist
expect_err "add --persist with a bad port leaves no record" "" \
	"$CTL" link add mrp1 --port bogus --ip 192.0.2.3/24 --persist
[ -e "$METAROCE_CONFDIR/mrp1.conf" ] && fail "record of a refused device" ||
	pass "no record of a refused device"

# A record the service would find at boot, written by hand like an admin.
cat >"$METAROCE_CONFDIR/mrp2.conf" <<'R'
name=mrp2
port=net_af_packet0,iface=p1
ip=192.0.2.4/24
mac=02:00:c0:00:02:04
mtu=1024
udp_port=4797
R
expect_ok "restore makes the missing device" "$CTL" link restore
eq "devices after restore" "$(names)" "mrp0 mrp2 mrp9 "
expect_ok "restore again changes nothing" "$CTL" link restore
eq "devices after a second restore" "$(names)" "mrp0 mrp2 mrp9 "
expect_ok "del --persisted (the service's stop)" "$CTL" link del --persisted
eq "only the unpersisted device is left" "$(names)" "mrp9 "
eq "records kept" "$(ls "$METAROCE_CONFDIR" | tr '\n' ' ')" "mrp0.conf mrp2.conf "
expect_ok "restore (the service's start)" "$CTL" link restore
eq "devices back" "$(names)" "mrp0 mrp2 mrp9 "
out=$("$CTL" link show -v mrp0)
check "a restored device keeps its knobs" '^ +paths +3 +device$' "$out"

# A bad record is reported; the others are still made.
"$CTL" link del --persisted
echo "opt.paths=99" >>"$METAROCE_CONFDIR/mrp2.conf"
"$CTL" link restore 2>"$TMP/err"
rc=$?
[ $rc = 1 ] && pass "restore with a bad record exits 1" || fail "restore exit $rc"
check "the bad record is named with its line" 'mrp2\.conf:7: opt paths=99: paths must be 1\.\.64' "$(cat "$TMP/err")"
eq "the good record was restored" "$(names)" "mrp0 mrp9 "

expect_ok "del NAME --persist" "$CTL" link del mrp0 --persist
eq "device gone" "$(names)" "mrp9 "
[ -e "$METAROCE_CONFDIR/mrp0.conf" ] && fail "record still there" || pass "record gone"
expect_err "del --persist of nothing" "mrp0.conf: No such file or directory \(and no such device here\)" \
	"$CTL" link del mrp0 --persist
expect_err "del --persisted takes no NAME" "takes no NAME" "$CTL" link del mrp9 --persisted
"$CTL" link del mrp9
cli_done
