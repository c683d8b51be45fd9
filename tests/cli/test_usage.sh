#!/usr/bin/env bash
# metaroce-ctl and metaroce-run: help, and every bad input that is refused
# before anything is created (no root needed): one line on stderr, a
# non-zero exit status, the runtime directory untouched.
. "$(dirname "$0")/lib.sh"
cli_init "$@"

out=$("$CTL" --help) && check "--help" "link add NAME --port DEVARGS" "$out" ||
	fail "--help exits non-zero"
out=$("$CTL" link help) && check "link help" "link del NAME" "$out" ||
	fail "link help exits non-zero"

P=--port=0000:3b:00.0
add() { "$CTL" link add "$@"; }

expect_err "no command" "missing command" "$CTL"
expect_err "unknown command" "unknown command 'frob'" "$CTL" frob mr0
expect_err "unknown global option" "unknown option '--frob'" "$CTL" --frob
expect_err "unknown link command" "unknown link command 'frob'" \
	"$CTL" link frob mr0
expect_err "unknown add option" "unknown option '--speed'" \
	add mr0 $P --ip 192.0.2.1/24 --speed 100
expect_err "option without value" "option --ip needs a value" \
	add mr0 $P --ip
expect_err "missing name" "missing device NAME" add $P --ip 192.0.2.1/24
expect_err "two names" "unexpected argument 'mr1'" \
	add mr0 mr1 $P --ip 192.0.2.1/24
expect_err "bad name (slash)" "invalid device name 'a/b'" \
	add a/b $P --ip 192.0.2.1/24
expect_err "bad name (..)" "invalid device name '..'" \
	add .. $P --ip 192.0.2.1/24
expect_err "bad name (hidden)" "invalid device name '.mr0'" \
	add .mr0 $P --ip 192.0.2.1/24
# Names another installed provider would claim (rdma-core 44: rxe's
# "rdma_device:*Nrxe*"; siw's "siw*" in older releases).
for n in rxe0 rxe siw0 siw_a myNrxe1 xNsiw; do
	expect_err "name claimed by another provider ($n)" \
		"device name '$n' would be taken by rdma-core's (rxe \\(Soft-RoCE\\)|siw \\(Soft-iWARP\\)) provider, which claims the names" \
		add $n $P --ip 192.0.2.1/24
done
expect_err "--ip twice (IPv4)" "--ip: one IPv4 address at most" \
	add mr0 $P --ip 192.0.2.1/24 --ip 192.0.2.2/24
expect_err "--mac twice" "--mac given twice" \
	add mr0 $P --ip 192.0.2.1/24 --mac 02:00:00:00:00:01 \
	--mac 02:00:00:00:00:02
expect_err "bad name (64 chars)" "invalid device name" \
	add "$(printf 'm%.0s' {1..64})" $P --ip 192.0.2.1/24
expect_err "no --port" "at least one --port" add mr0 --ip 192.0.2.1/24
expect_err "no --ip" "--ip ADDR/LEN \\(IPv4\\) is needed" add mr0 $P

for ip in 192.0.2.1 192.0.2.1/33 192.0.2.256/24 192.0.2/24 ' 192.0.2.1/24' \
	192.0.2.1/24x 192.0.2.1/-1 fe80::1/64; do
	expect_err "malformed --ip '$ip'" "--ip '$ip': expected" \
		add mr0 $P --ip "$ip"
done
for ip in 0.0.0.0/8 127.0.0.1/8 224.0.0.1/24 255.255.255.255/32; do
	expect_err "non-unicast --ip $ip" "not a unicast host address" \
		add mr0 $P --ip "$ip"
done
expect_err "network address" "network or broadcast" \
	add mr0 $P --ip 192.0.2.0/24
expect_err "broadcast address" "network or broadcast" \
	add mr0 $P --ip 192.0.2.255/24
expect_err "prefix 0" "prefix length must be 1..32" \
	add mr0 $P --ip 192.0.2.1/0

for mac in 02:00:00:00:00 02:00:00:00:00:01:02 02-00-00-00-00-01 \
	02:00:00:00:00:0g 01:00:5e:00:00:01 00:00:00:00:00:00 2:0:0:0:0:1; do
	expect_err "malformed --mac '$mac'" "--mac '$mac': expected" \
		add mr0 $P --ip 192.0.2.1/24 --mac "$mac"
done

for mtu in 0 1000 1500 8192 -1 4096x ''; do
	expect_err "bad --mtu '$mtu'" "--mtu '$mtu': must be" \
		add mr0 $P --ip 192.0.2.1/24 --mtu "$mtu"
done
expect_err "udp port 4791" "4791 is RoCEv2's" \
	add mr0 $P --ip 192.0.2.1/24 --udp-port 4791
expect_err "udp port 0" "must be 1..65535" \
	add mr0 $P --ip 192.0.2.1/24 --udp-port 0
expect_err "udp port 65536" "must be 1..65535" \
	add mr0 $P --ip 192.0.2.1/24 --udp-port 65536

expect_err "devargs: unknown kind" "neither a vdev name" \
	add mr0 --port nosuchif0 --ip 192.0.2.1/24
expect_err "devargs: bad PCI address" "neither a vdev name" \
	add mr0 --port 0000:3b:00.8 --ip 192.0.2.1/24
expect_err "devargs: space" "character ' ' not allowed" \
	add mr0 --port 'net_tap0,iface=a b' --ip 192.0.2.1/24
expect_err "devargs: not key=value" "'iface' is not key=value" \
	add mr0 --port net_tap0,iface --ip 192.0.2.1/24
expect_err "devargs: empty value" "'iface=' is not key=value" \
	add mr0 --port net_tap0,iface= --ip 192.0.2.1/24
expect_err "devargs: trailing comma" "'' is not key=value" \
	add mr0 --port net_tap0, --ip 192.0.2.1/24
expect_err "devargs: unbalanced" "unbalanced" \
	add mr0 --port 'net_tap0,x=[1,2' --ip 192.0.2.1/24
expect_err "devargs: af_packet without iface" "needs iface=<netdev>" \
	add mr0 --port net_af_packet0 --ip 192.0.2.1/24
expect_err "devargs: no such iface" "no interface mrnosuch0 in this" \
	add mr0 --port net_af_packet0,iface=mrnosuch0 --ip 192.0.2.1/24
expect_err "devargs: iface too long" "is not an interface name" \
	add mr0 --port net_af_xdp0,iface=abcdefghijklmnop --ip 192.0.2.1/24
expect_err "port given twice" "--port 0000:3b:00.0 given twice" \
	add mr0 $P $P --ip 192.0.2.1/24
nine=()
for i in 0 1 2 3 4 5 6 7 8; do nine+=(--port "net_memif$i"); done
expect_err "nine ports" "at most 8 --port" add mr0 "${nine[@]}" \
	--ip 192.0.2.1/24

expect_err "del: no such device" "no MetaRoCE device mr9 in this network" \
	"$CTL" link del mr9
expect_err "del: no name" "missing device NAME" "$CTL" link del
expect_err "del: option" "unknown option '--force'" \
	"$CTL" link del mr0 --force
expect_err "show: no such device" "no MetaRoCE device mr9" \
	"$CTL" link show mr9
expect_err "show: bad option" "unknown option '--xml'" \
	"$CTL" link show --xml

out=$("$CTL" link show --json) &&
	[ "$(python3 -c 'import json,sys; print(json.load(sys.stdin))' \
		<<<"$out")" = "[]" ] && pass "show --json with no device: []" ||
	fail "show --json with no device: '$out'"

# metaroce-run
expect_err "run: no command" "no command given" "$RUN"
"$RUN" >/dev/null 2>&1
[ $? -eq 127 ] && pass "run: no command exits 127" || fail "run: no command"
expect_err "run: command not found" "mrnosuchcmd: command not found" \
	"$RUN" mrnosuchcmd
"$RUN" mrnosuchcmd 2>/dev/null
[ $? -eq 127 ] && pass "run: not found exits 127" || fail "run: not found"
out=$("$RUN" --help) && check "run --help" "Usage: metaroce-run" "$out"
touch "$TMP/noexec"
expect_err "run: not executable" "noexec: Permission denied" "$RUN" "$TMP/noexec"
"$RUN" "$TMP/noexec" 2>/dev/null
[ $? -eq 126 ] && pass "run: not executable exits 126" || fail "run: 126"
out=$(PATH="/nonexistent:$PATH" "$RUN" sh -c 'echo found')
check "run: searches PATH" "^found$" "$out"

# The shim: NETLINK_RDMA fails as on a kernel without RDMA, other
# netlink families work; an existing LD_PRELOAD is kept, ours appended.
nl='import socket, sys
try:
    socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, int(sys.argv[1])).close()
    print("opened")
except OSError as e:
    print("errno", e.errno)'
out=$("$RUN" python3 -c "$nl" 20)
check "shim: NETLINK_RDMA -> EPROTONOSUPPORT" "^errno 93$" "$out"
out=$("$RUN" python3 -c "$nl" 0)
check "shim: NETLINK_ROUTE untouched" "^opened$" "$out"
out=$(LD_PRELOAD=libm.so.6 "$RUN" sh -c 'echo "$LD_PRELOAD"')
check "LD_PRELOAD kept, shim appended" \
	"^libm\.so\.6:/.*/libmetaroce-netlink\.so$" "$out"
out=$("$RUN" "$RUN" sh -c 'echo "$LD_PRELOAD"')
check "shim not added twice" "^/[^:]*libmetaroce-netlink\.so$" "$out"
cli_done
