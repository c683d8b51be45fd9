#!/usr/bin/env bash
# The knob table (lib/devconf/mr_knobs.h) as a user meets it: the README
# lists every knob with its variable, default and range; --opt on link add
# and link set, with one clear error for a bad name or value; link show -v
# and where each value comes from; and a verbs program that gets the
# device's knob and the environment's override (engine_stats), or refuses
# to open the engine with a bad variable.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
README=$(dirname "$0")/../../README.md

# 1. The README's table has one row per knob, with the table's values.
rows=$("$CTL" knobs | tail -n +2)
[ "$(wc -l <<<"$rows")" -ge 17 ] && pass "metaroce-ctl knobs: $(wc -l <<<"$rows") rows" ||
	fail "metaroce-ctl knobs printed: $rows"
while read -r name type def range layer _; do
	env=METAROCE_$(tr a-z A-Z <<<"$name")
	[ "$def" = 0 ] && [ "${range%%,*}" = 0 ] && def="0 (off)" &&
		range="0, ${range#0,}"
	range=${range//|/\\|} # a choice's names, escaped in the Markdown table
	line=$(grep -F "| \`$name\` | \`$env\` |" "$README")
	if [ -z "$line" ]; then
		fail "README: no row for knob $name ($env)"
	elif ! grep -qF "| \`$name\` | \`$env\` | $def | $range | $layer |" <<<"$line"; then
		fail "README: row of $name is not '$def | $range | $layer': $line"
	else
		pass "README lists $name"
	fi
done <<<"$rows"
n_readme=$(grep -cE '^\| `[a-z_]+` \| `METAROCE_' "$README")
[ "$n_readme" = "$(wc -l <<<"$rows")" ] && pass "README: no knob the table lacks" ||
	fail "README has $n_readme knob rows, the table $(wc -l <<<"$rows")"

# The rest needs a device (a node in /dev/infiniband) and, for the verbs
# program, an emulated host (a namespace of its own).
need_root
prov=$(dirname "$RUN")/../providers/metaroce/libmetaroce-rdmav34.so
[ -f "$prov" ] || { echo "FAIL: provider not built: $prov"; exit 1; }
cli_two_hosts --opt paths=6 --opt dp_udp_csum=yes
IB=$METAROCE_RUNDIR/net-$(inA stat -L -c %i /proc/self/ns/net)/sysfs/class/infiniband

# 2. --opt: the record, the errors.
rec=$(inA cat "$IB/$DEV_A/metaroce.conf")
check "record: opt.paths" '^opt\.paths=6$' "$rec"
check "record: opt.dp_udp_csum" '^opt\.dp_udp_csum=yes$' "$rec"
expect_err "link add: --opt out of range" '^metaroce-ctl: --opt paths=65: paths must be 1\.\.64 ' \
	inA "$CTL" link add mrx --port net_af_packet1,iface=lo --ip 10.86.0.1/24 --opt paths=65
expect_err "link add: --opt unknown knob" "^metaroce-ctl: --opt 'pathz=2': no knob named pathz" \
	inA "$CTL" link add mrx --port net_af_packet1,iface=lo --ip 10.86.0.1/24 --opt pathz=2
expect_err "link add: --opt bad boolean" '^metaroce-ctl: --opt debug=2: debug must be 0 or 1' \
	inA "$CTL" link add mrx --port net_af_packet1,iface=lo --ip 10.86.0.1/24 --opt debug=2
expect_err "link set: bad value" '^metaroce-ctl: --opt dp_slice_us=50: dp_slice_us must be 0 \(off\) or 100\.\.100000' \
	inA "$CTL" link set $DEV_A --opt dp_slice_us=50
expect_err "link set: no such device" '^metaroce-ctl: no MetaRoCE device nosuch ' \
	inA "$CTL" link set nosuch --opt paths=2
expect_err "link set: nothing to change" '^metaroce-ctl: link set mra: nothing to change' \
	inA "$CTL" link set $DEV_A

# 3. link show -v: values and sources.
out=$(inA env METAROCE_ACK_EVERY=32 "$CTL" link show -v $DEV_A)
check "show -v: device value" '^ +paths +6 +device$' "$out"
check "show -v: environment value" '^ +ack_every +32 +environment METAROCE_ACK_EVERY$' "$out"
check "show -v: default" '^ +min_rto_us +20000 +default$' "$out"
check "show -v: boolean from the device" '^ +dp_udp_csum +yes +device$' "$out"
expect_ok "link set: paths back to default, engine_stats on" \
	inA "$CTL" link set $DEV_A --opt paths= --opt engine_stats=on
out=$(inA "$CTL" link show -v $DEV_A)
check "show -v: paths= restored the default" '^ +paths +4 +default$' "$out"
check "show -v: engine_stats from the device" '^ +engine_stats +yes +device$' "$out"
check_not "record: no opt.paths after paths=" '^opt\.paths' "$(inA cat "$IB/$DEV_A/metaroce.conf")"
expect_err "show -v: a bad variable is the error a program gets" \
	'^metaroce-ctl: METAROCE_PATHS=0: must be 1\.\.64$' \
	inA env METAROCE_PATHS=0 "$CTL" link show -v $DEV_A
expect_err "show -v: a METAROCE_ variable that is no knob names the nearest" \
	'^metaroce-ctl: environment variable METAROCE_PATH is not a knob \(did you mean METAROCE_PATHS\? metaroce-ctl knobs lists them\)$' \
	inA env METAROCE_PATH=8 "$CTL" link show -v $DEV_A
expect_ok "show -v: the tools' own METAROCE_ variables pass" \
	inA env METAROCE_DEMO_SECONDS=3 "$CTL" link show -v $DEV_A

# 4. The provider: the device's engine_stats=on prints the engine's
# counters at close; the environment turns it off again; a bad variable
# refuses the engine with one line naming it.
CHAN_VERBS=${3:-}
[ -x "$CHAN_VERBS" ] || { fail "no chan_verbs program given"; cli_done; }
out=$(inA timeout -k 5 "$CLI_T" "$RUN" "$CHAN_VERBS" $DEV_A 2>&1)
rc=$?
[ $rc = 0 ] && pass "verbs program with the device's knobs" || fail "chan_verbs exit $rc: $out"
check "device knob engine_stats reached the provider" "^metaroce: $DEV_A: engine counters:" "$out"
out=$(inA env METAROCE_ENGINE_STATS=no timeout -k 5 "$CLI_T" "$RUN" "$CHAN_VERBS" $DEV_A 2>&1)
check_not "METAROCE_ENGINE_STATS=no overrides the device" "engine counters" "$out"
out=$(inA env METAROCE_PATHS=99 timeout -k 5 "$CLI_T" "$RUN" "$CHAN_VERBS" $DEV_A 2>&1)
rc=$?
[ $rc != 0 ] && pass "a bad METAROCE_PATHS refuses the engine (exit $rc)" ||
	fail "METAROCE_PATHS=99 accepted: $out"
check "the refusal names the variable and its range" \
	"^metaroce: $DEV_A: METAROCE_PATHS=99: must be 1\.\.64$" "$out"
out=$(inA env METAROCE_DP_ZEROCPY=0 timeout -k 5 "$CLI_T" "$RUN" "$CHAN_VERBS" $DEV_A 2>&1)
rc=$?
[ $rc != 0 ] && pass "a misspelt METAROCE_ variable refuses the engine (exit $rc)" ||
	fail "METAROCE_DP_ZEROCPY=0 accepted: $out"
check "the refusal names the variable and the knob meant" \
	"^metaroce: $DEV_A: environment variable METAROCE_DP_ZEROCPY is not a knob \(did you mean METAROCE_DP_ZEROCOPY\?" "$out"
cli_done
