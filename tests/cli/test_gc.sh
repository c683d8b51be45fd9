#!/usr/bin/env bash
# metaroce-ctl link gc: nodes and views of network namespaces that are gone
# (ip netns del without link del) are removed; those of live namespaces -
# kept by a bind mount in /run/netns or only by a process - and nodes a
# process holds open are kept. Root.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
need_root
command -v unshare >/dev/null || { echo "SKIP: no unshare"; exit 77; }
command -v setpriv >/dev/null || { echo "SKIP: no setpriv"; exit 77; }

# Processes whose namespaces even root may not inspect (a sandbox's own
# init) make gc refuse; the test vouches for them, as an admin would.
SKIP=()
for i in $(seq 8); do
	o=$("$CTL" link gc --dry-run "${SKIP[@]}" 2>&1) && break
	p=$(sed -n 's/.*cannot inspect the network namespaces of pid \([0-9]*\) .*nothing removed (--skip-pid [0-9]*.*/\1/p' <<<"$o")
	[ -n "$p" ] || { fail "gc --dry-run: $o"; break; }
	pass "refuses while pid $p cannot be inspected"
	SKIP+=(--skip-pid "$p")
done
gc() { "$CTL" link gc "${SKIP[@]}" "$@"; }

T=$$
D=mrgcD$T # deleted without link del
L=mrgcL$T # stays (bind mount)
H=mrgcH$T # deleted, but its node is held open
cli_on_exit "ip netns del $D; ip netns del $L; ip netns del $H"
cli_on_exit "ip netns exec $L $CTL link del mr0"
for ns in $D $L $H; do
	ip netns add $ns || { echo "SKIP: cannot create namespaces"; exit 77; }
	ip -n $ns link set lo up
done
i=1
for ns in $D $L $H; do
	expect_ok "add mr0 in $ns" ip netns exec $ns "$CTL" link add mr0 \
		--port net_af_packet0,iface=lo --ip 192.0.2.$i/24
	i=$((i + 1))
done
node_of() {
	ip netns exec "$1" "$CTL" link show mr0 --json |
		sed -n 's/.*"node": "\([^"]*\)".*/\1/p'
}
ND=$(node_of $D)
NL=$(node_of $L)
NH=$(node_of $H)
VD=$(ip netns exec $D stat -L -c %i /proc/self/ns/net)
VL=$(ip netns exec $L stat -L -c %i /proc/self/ns/net)

# A namespace only a process keeps alive, with a device.
unshare -n bash -c "'$CTL' link add mr0 --port net_af_packet0,iface=lo \
	--ip 192.0.2.9/24 >/dev/null && stat -L -c %i /proc/self/ns/net && \
	exec sleep 300" >"$TMP/p.ino" &
PP=$!
cli_on_exit "kill $PP"
for i in $(seq 50); do [ -s "$TMP/p.ino" ] && break; sleep 0.1; done
VP=$(cat "$TMP/p.ino")
NP=$(basename "$(grep -l . "$METAROCE_RUNDIR/net-$VP"/sysfs/class/infiniband_verbs/*/ibdev | head -1 | xargs dirname)")
[ -n "$VP" ] && [ -c "/dev/infiniband/$NP" ] && pass "process-only namespace: $NP" ||
	fail "process-only namespace: ino '$VP' node '$NP'"

ip netns del $D
ip netns del $H
sleep 300 <"/dev/infiniband/$NH" &
HOLD=$!
cli_on_exit "kill $HOLD"

gone() { [ ! -e "/dev/infiniband/$1" ] && pass "$2" || fail "$2"; }
there() { [ -c "/dev/infiniband/$1" ] && pass "$2" || fail "$2"; }

expect_err "usage: unknown option" "unknown option '--frob' for link gc" \
	"$CTL" link gc --frob
expect_err "usage: --skip-pid without a pid" "--skip-pid needs a process id" \
	"$CTL" link gc --skip-pid x
o=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" link gc 2>&1)
check "needs root" "link gc needs root" "$o"

o=$(gc --dry-run 2>&1)
check "dry run names the dead node" "^would remove node /dev/infiniband/$ND \(network namespace gone\)$" "$o"
check "dry run names the dead view" "^would remove view $METAROCE_RUNDIR/net-$VD \(network namespace gone\)$" "$o"
there "$ND" "dry run removes nothing"
[ -d "$METAROCE_RUNDIR/net-$VD" ] && pass "dry run keeps the view" ||
	fail "dry run removed the view"

o=$(gc 2>&1)
echo "$o" | sed 's/^/  gc: /'
check "removed the dead namespace's node" "^removed node /dev/infiniband/$ND " "$o"
check "removed its view" "^removed view $METAROCE_RUNDIR/net-$VD " "$o"
check "held node mentioned" "kept [0-9]+ live node\(s\) and the nodes still held open$" "$o"
gone "$ND" "dead node gone"
[ ! -e "$METAROCE_RUNDIR/net-$VD" ] && pass "dead view gone" || fail "dead view left"
there "$NL" "node of the bind-mounted namespace kept"
there "$NP" "node of the process-only namespace kept"
there "$NH" "held node kept"
[ -d "$METAROCE_RUNDIR/net-$VL" ] && [ -d "$METAROCE_RUNDIR/net-$VP" ] &&
	pass "live views kept" || fail "a live view was removed"
o=$(ip netns exec $L "$RUN" ibv_devinfo -d mr0 2>&1)
check "live device still works" "state:	+PORT_ACTIVE" "$o"

kill $HOLD
wait $HOLD 2>/dev/null
kill $PP
wait $PP 2>/dev/null
o=$(gc 2>&1)
check "node no longer held: removed" "^removed node /dev/infiniband/$NH " "$o"
check "process gone: its node removed" "^removed node /dev/infiniband/$NP " "$o"
check "process gone: its view removed" "^removed view $METAROCE_RUNDIR/net-$VP " "$o"
gone "$NH" "held node gone"
gone "$NP" "process-only node gone"
there "$NL" "bind-mounted namespace's node still kept"
o=$(gc 2>&1)
check_not "idempotent: nothing more of ours" "$NL|net-$VL" "$o"
expect_ok "del mr0 in $L" ip netns exec $L "$CTL" link del mr0
cli_done
