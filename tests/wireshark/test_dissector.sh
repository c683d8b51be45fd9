#!/usr/bin/env bash
# The Wireshark dissector (utils/wireshark/metaroce.lua) with tshark:
# 1. golden packets (docs/spec/wire.md Appendix A, one of every other
#    opcode) decode to the values the spec prints, and each malformed
#    packet gets the expert item of the rule it breaks;
# 2. the capture switch (knob dp_pcap_mb): real traffic between two
#    emulated hosts (mri-verbs: every RC opcode; ibv_ud_pingpong: UD)
#    captured by the datapath decodes with every ICRC good, no malformed
#    packet, every opcode present, the UD QPNs that the program printed
#    and ibv_ud_pingpong's qkey; the file stops at its bound.
# Usage: test_dissector.sh CTL RUN MRI_VERBS
. "$(dirname "$0")/../cli/lib.sh"
cli_init "$1" "$2"
VERBS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
LUA=$HERE/../../utils/wireshark/metaroce.lua
command -v tshark >/dev/null || { echo "SKIP: tshark not installed (scripts/deps.sh)"; exit 77; }
ts() { tshark -X lua_script:"$LUA" -o gui.column.format:"No.,%m" "$@" 2>&1 | grep -v '^Running as user'; }
fields() { # PCAP FIELD...: one line per frame, fields joined by |
	local pcap=$1 args=()
	shift
	for x in "$@"; do args+=(-e "$x"); done
	ts -r "$pcap" -T fields -E separator='|' -E occurrence=a "${args[@]}"
}
eq() { [ "$2" = "$3" ] && pass "$1" || fail "$1: '$2' != '$3'"; }

# --- 1. golden packets
python3 "$HERE/golden_pcap.py" "$TMP/golden.pcap" || { fail "golden_pcap.py"; cli_done; }
G=$TMP/golden.pcap
row() { fields "$G" "$@" | sed -n "${N}p"; }
N=1; eq "SEND_IMM (spec A): BTH" "$(row metaroce.version metaroce.opcode metaroce.flags.solicited metaroce.flags.ack_req metaroce.dqpn metaroce.sqpn metaroce.ssn metaroce.msn metaroce.rsn metaroce.offset metaroce.msg_len)" \
	"1|0x02|1|1|0x00000011|0x00000022|16909060|7|3|0|5"
N=1; eq "SEND_IMM: PTH, IMMDT, payload, ICRC" "$(row metaroce.path_id metaroce.ppsn metaroce.imm metaroce.payload metaroce.payload_len metaroce.icrc metaroce.icrc.status)" \
	"2|256|deadbeef|68656c6c6f|5|0x047c3fc7|good"
N=2; eq "READ_REQ (spec A): RETH" "$(row metaroce.opcode metaroce.dqpn metaroce.ssn metaroce.ppsn metaroce.reth.vaddr metaroce.reth.rkey metaroce.reth.dma_len metaroce.icrc.status)" \
	"0x05|0x00abcdef|4294967294|4294967295|0x00007f0012345678|0x00001234|4096|good"
N=3; eq "ACK (spec A): AETH" "$(row metaroce.aeth.syndrome metaroce.aeth.nblocks metaroce.aeth.cum_ssn metaroce.aeth.cum_msn metaroce.aeth.rate_hint metaroce.aeth.ecn_ce metaroce.path_id metaroce.icrc.status)" \
	"0|1|16909061|8|100000|3|1|good"
N=3; eq "ACK: SACK block (0x102 and 0x104 received)" "$(row metaroce.sack.path_id metaroce.sack.cum_ppsn metaroce.sack.received metaroce.sack.highest)" \
	"2|257|2|260"
N=4; eq "WRITE_IMM: RETH + IMMDT" "$(row metaroce.opcode metaroce.reth.vaddr metaroce.reth.rkey metaroce.reth.dma_len metaroce.imm metaroce.payload)" \
	"0x04|0x0000000000001000|0x00000abc|5|01020304|776f726c64"
N=5; eq "ATOMIC_CS: ATOMETH" "$(row metaroce.opcode metaroce.atometh.vaddr metaroce.atometh.rkey metaroce.atometh.swap_add metaroce.atometh.compare metaroce.msg_len)" \
	"0x07|0x0000000000002000|0x00000055|0x0000000000001111|0x0000000000002222|8"
N=6; eq "ATOMIC_RESP: ATOMACKETH" "$(row metaroce.opcode metaroce.atomacketh.orig)" "0x09|0x0000000000002222"
N=7; eq "UD_SEND_IMM: DETH + IMMDT" "$(row metaroce.opcode metaroce.deth.qkey metaroce.imm metaroce.payload)" \
	"0x21|0x11111111|cafe0001|616263"
N=8; eq "NAK RNR" "$(row metaroce.aeth.syndrome metaroce.aeth.rnr_timer metaroce.aeth.nak_msn _ws.expert.message)" \
	"2|14|4|NAK RNR"
# Malformed packets: the expert message names the rule.
expect_row() { N=$1; check "frame $1: $2" "$3" "$(row _ws.expert.message metaroce.icrc.status)"; }
expect_row 9 "bad ICRC" "^ICRC 0x047c3f38, computed 0x047c3fc7\|bad$"
expect_row 10 "version 2" "Unknown wire version \(MR-PARSE-2\)"
expect_row 11 "reserved opcode" "Reserved opcode \(MR-PARSE-3\)"
expect_row 12 "reserved flag bit" "Reserved field not zero \(MR-PARSE-6\)"
expect_row 13 "dma_len != msg_len" "dma_len must equal msg_len \(MR-EXT-1\)"
expect_row 14 "65 SACK blocks" "More than 64 SACK blocks \(MR-PARSE-5\)"
expect_row 15 "20 bytes" "at least 44 \(BTH \+ PTH \+ ICRC\) needed"
expect_row 16 "two blocks for one path" "Two SACK blocks for one path \(MR-ACK-9\)"
expect_row 17 "READ_REQ without its RETH" "READ_REQ needs at least 60 bytes, has 52"
expect_row 18 "a CE flag with a count of 0" "CE flag with a count of 0 \(MR-ACK-13\)"
N=19; eq "path 63 with 7 CE marks (MR-ACK-11): no expert item" \
	"$(row metaroce.sack.path_id metaroce.sack.ce_cum metaroce.aeth.ecn_ce _ws.expert.message)" "63|7|9|"
N=20; eq "a WRITE quoted cut short in an ICMP error: headers decoded, no ICRC or length verdict" \
	"$(row icmp.type metaroce.opcode metaroce.ssn metaroce.path_id metaroce.ppsn metaroce.icrc.status _ws.expert.message)" \
	"3|0x03|42|5|9|not checked (quoted in an ICMP error)|"
N=21; eq "ATOMIC_WRITE (MR-EXT-9): ATOMETH, no expert item" \
	"$(row metaroce.opcode metaroce.atometh.vaddr metaroce.atometh.rkey metaroce.atometh.swap_add metaroce.msg_len metaroce.icrc.status _ws.expert.message)" \
	"0x0b|0x0000000000003008|0x00000066|0x61772d6279746573|8|good|"
expect_row 22 "a bitmap ending in a zero byte" "Bitmap ends in a zero byte \(MR-ACK-12\)"
n_err=$(fields "$G" _ws.expert.severity | head -8 | grep -c 8388608)
eq "no error on the 8 good packets" "$n_err" 0

# --- 2. real traffic through the capture switch
need_root
[ -x "$VERBS" ] || { fail "no mri-verbs program given"; cli_done; }
command -v ibv_ud_pingpong >/dev/null || { echo "SKIP: ibv_ud_pingpong not installed"; exit 77; }
cli_two_hosts --opt dp_pcap_mb=64
STATS_A=$METAROCE_RUNDIR/net-$(inA stat -L -c %i /proc/self/ns/net)/sysfs/class/infiniband/$DEV_A/stats
cli_pair rc 18600 "$VERBS" server -d $DEV_A -- "$VERBS" client -d $DEV_B $TCP_A
[ "$CRC" = 0 ] && [ "$SRC" = 0 ] && pass "mri-verbs (every RC opcode) with capture on" ||
	{ fail "mri-verbs: client $CRC server $SRC"; sed 's/^/  /' "$TMP/rc.cli" "$TMP/rc.srv"; }
cli_pair ud 18515 ibv_ud_pingpong -d $DEV_A -g 0 -n 20 -- ibv_ud_pingpong -d $DEV_B -g 0 -n 20 $TCP_A
[ "$CRC" = 0 ] && [ "$SRC" = 0 ] && pass "ibv_ud_pingpong with capture on" ||
	{ fail "ibv_ud_pingpong: client $CRC server $SRC"; sed 's/^/  /' "$TMP/ud.cli" "$TMP/ud.srv"; }
check "the server reported its capture" "^mrdp: $DEV_A: captured [0-9]+ frames in .*metaroce\.[0-9]+\.pcapng$" "$(cat "$TMP/rc.srv")"
caps=$(ls "$STATS_A"/metaroce.*.pcapng 2>/dev/null)
eq "one capture file per process on host A" "$(wc -l <<<"$caps")" 2
rc_cap=$(sed -n 's/^mrdp: [^ ]*: captured [0-9]* frames in \(.*\)$/\1/p' "$TMP/rc.srv")
ud_cap=$(sed -n 's/^mrdp: [^ ]*: captured [0-9]* frames in \(.*\)$/\1/p' "$TMP/ud.srv")
[ -f "$rc_cap" ] && [ -f "$ud_cap" ] || { fail "capture files missing: '$rc_cap' '$ud_cap'"; cli_done; }

# One pass of tshark per capture (the Lua ICRC check is slow), then awk.
F=(frame.packet_flags_direction ip.src udp.dstport metaroce.opcode
	metaroce.icrc.status _ws.expert.group metaroce.msn metaroce.sqpn
	metaroce.dqpn metaroce.deth.qkey)
fields "$rc_cap" "${F[@]}" >"$TMP/rc.fields"
n_udp=$(awk -F'|' '$3 == 4797' "$TMP/rc.fields" | wc -l)
n_mr=$(awk -F'|' '$3 == 4797 && $4 != ""' "$TMP/rc.fields" | wc -l)
[ "$n_udp" -gt 50 ] && pass "RC capture: $n_udp MetaRoCE frames" || fail "RC capture: only $n_udp frames"
eq "every frame to port 4797 is dissected" "$n_mr" "$n_udp"
eq "no bad ICRC" "$(awk -F'|' '$5 == "bad"' "$TMP/rc.fields" | wc -l)" 0
# 0x07000000: PI_MALFORMED (NAKs and retransmissions are other groups).
eq "no malformed packet" "$(awk -F'|' '$4 != "" && $6 ~ /0x07000000/' "$TMP/rc.fields" | wc -l)" 0
# A PROBE (0x11) appears only when a path went silent (MR-PM-1): a loaded
# machine may or may not make one, so it is not required here.
ops=$(awk -F'|' '$4 != "" && $4 != "0x11" {print $4}' "$TMP/rc.fields" | sort -u | tr '\n' ' ')
eq "every RC opcode present" "$ops" "0x01 0x02 0x03 0x04 0x05 0x06 0x07 0x08 0x09 0x10 "
# Direction and plane from the pcapng blocks: what host A sent is outbound.
eq "outbound frames come from host A's device" \
	"$(awk -F'|' '$4 != "" && $1 == 2 {print $2}' "$TMP/rc.fields" | sort -u)" "10.85.0.1"
eq "inbound frames come from host B's device" \
	"$(awk -F'|' '$4 != "" && $1 == 1 {print $2}' "$TMP/rc.fields" | sort -u)" "10.85.0.2"
check "interface named after the plane" "^plane0 net_af_packet0,iface=mrcva" \
	"$(ts -r "$rc_cap" -c 1 -T fields -e frame.interface_name)"
# READ responses answer READ requests: same msn, reversed QPs.
req=$(awk -F'|' '$4 == "0x05" {print $7, $8}' "$TMP/rc.fields" | sort -u)
resp=$(awk -F'|' '$4 == "0x06" {print $7, $9}' "$TMP/rc.fields" | sort -u)
[ -n "$req" ] && [ "$req" = "$resp" ] && pass "every READ_RESP (msn, dqpn) answers a READ_REQ (msn, sqpn)" ||
	fail "READ_REQ/RESP do not match: req '$req' resp '$resp'"

# UD: the QPNs the program printed, the qkey it uses.
fields "$ud_cap" "${F[@]}" >"$TMP/ud.fields"
qpns=$(sed -n 's/.*local address: .*QPN \(0x[0-9a-f]*\),.*/\1/p' "$TMP/ud.srv" "$TMP/ud.cli")
ud=$(awk -F'|' '$4 == "0x20"' "$TMP/ud.fields")
[ -n "$ud" ] && pass "UD capture: $(wc -l <<<"$ud") UD_SEND frames" || fail "no UD_SEND frame"
eq "UD qkey is ibv_ud_pingpong's" "$(awk -F'|' '{print $10}' <<<"$ud" | sort -u)" "0x11111111"
dec=$(awk -F'|' '{print $8; print $9}' <<<"$ud" | while read -r q; do printf '0x%06x\n' $((q)); done | sort -u)
want=$(while read -r q; do printf '0x%06x\n' $((q)); done <<<"$qpns" | sort -u)
eq "UD dqpn/sqpn are the QPNs ibv_ud_pingpong printed" "$dec" "$want"

# --- 3. the bound: 1 MB of capture, more traffic than that.
inA "$CTL" link set $DEV_A --opt dp_pcap_mb=1
inB "$CTL" link set $DEV_B --opt dp_pcap_mb=0
cli_pair bw 18515 ib_write_bw -d $DEV_A -x 0 -F -s 65536 -n 40 -- ib_write_bw -d $DEV_B -x 0 -F -s 65536 -n 40 $TCP_A
[ "$CRC" = 0 ] && pass "ib_write_bw with a 1 MB capture" || { fail "ib_write_bw exit $CRC"; sed "s/^/  /" "$TMP/bw.cli"; }
bw_cap=$(sed -n 's/.*mrdp: [^ ]*: captured [0-9]* frames in \([^ ]*\) (dp_pcap_mb reached.*/\1/p' "$TMP/bw.srv")
[ -f "$bw_cap" ] && pass "the capture says it reached its bound" ||
	{ fail "no 'dp_pcap_mb reached' line"; grep mrdp "$TMP/bw.srv"; }
[ -f "$bw_cap" ] && size=$(stat -c %s "$bw_cap") && [ "$size" -le 1048576 ] && [ "$size" -gt 900000 ] &&
	pass "capture file within 1 MB ($size bytes)" || fail "capture size ${size:-?}"
[ -f "$bw_cap" ] && eq "the bounded file reads to its end, every ICRC good" \
	"$(fields "$bw_cap" metaroce.icrc.status | grep -c bad)" 0
cli_done
