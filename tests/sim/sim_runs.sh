#!/usr/bin/env bash
# metaroce-sim through its command: bad input (one line naming the field,
# exit 2, nothing created), determinism (same seed: byte-identical
# outputs), one long flow against the link's analytic goodput, every
# workload and both transports with every byte checked (also under loss,
# corruption and a failed plane), and a sweep. Usage: sim_runs.sh SIM
set -u
sim=$1
tmp=$(mktemp -d /tmp/simtest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
field() { python3 -c "import json,sys; v=json.load(open('$1/summary.json'))['$2']; print(v)"; }

# --- bad input: one line, exit 2, no output directory ---
bad() {
	local want=$1; shift
	"$sim" run "$@" --out "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" = 2 ] || fail "bad input '$*': exit $rc, not 2"
	[ "$(wc -l <"$tmp/err")" = 1 ] || fail "bad input '$*': not one line: $(cat "$tmp/err")"
	grep -q -- "$want" "$tmp/err" || fail "bad input '$*': '$(cat "$tmp/err")' does not name '$want'"
	[ ! -e "$tmp/bad" ] || fail "bad input '$*': output created"
	rm -rf "$tmp/bad"
}
bad "unknown flag '--nope'" --nope 1
bad "hosts: 1 is out of range" --hosts 1
bad "loss: 'x' is not a number" --loss x
bad "workload: 'ring' is not one of" --workload ring
bad "fail: plane 2 does not exist" --planes 2 --fail plane=2,at=10us
bad "fail: until must be after at" --fail plane=0,at=10us,until=5us
bad "paths: 2 paths cannot cover 4 planes" --planes 4 --paths 2
echo '{"hosts": 4, "bogus": 1}' >"$tmp/s.json"
bad "unknown key 'bogus'" "$tmp/s.json"
echo '{"hosts": ' >"$tmp/s2.json"
bad "s2.json" "$tmp/s2.json"
"$sim" sweep --vary loss=0,2 --out "$tmp/bad" 2>"$tmp/err"
[ $? = 2 ] && grep -q "loss: 2 is out of range" "$tmp/err" && [ ! -e "$tmp/bad" ] ||
	fail "sweep with a bad point: $(cat "$tmp/err")"

# --- determinism ---
args=(--hosts 8 --hosts-per-leaf 4 --spines 2 --planes 2 --workload alltoall
	--size 64K --loss 0.01 --corrupt 0.001 --sample-us 5)
"$sim" run "${args[@]}" --seed 7 --out "$tmp/d1" 2>/dev/null || fail "determinism run 1"
"$sim" run "${args[@]}" --seed 7 --out "$tmp/d2" 2>/dev/null || fail "determinism run 2"
"$sim" run "${args[@]}" --seed 8 --out "$tmp/d3" 2>/dev/null || fail "determinism run 3"
strip() { grep -v '"wall_s"\|"cpu_s"\|"setup_s"\|"events_per_s"\|"out"' "$1/summary.json"; }
for f in timeseries.csv queues.csv flows.csv hosts.csv; do
	cmp -s "$tmp/d1/$f" "$tmp/d2/$f" || fail "same seed, $f differs"
done
# flows.csv: a row per connection, each flow's first byte before its end;
# hosts.csv: a row per host. The all-to-all's order (mrsim_wl.c): host i's
# j-th connection goes to host i + j, so no host is everyone's first.
python3 - "$tmp/d1" <<'PY' || fail "flows.csv / hosts.csv"
import csv, sys
f = list(csv.DictReader(open(sys.argv[1] + "/flows.csv")))
h = list(csv.DictReader(open(sys.argv[1] + "/hosts.csv")))
assert len(f) == 8 * 7 and len(h) == 8, (len(f), len(h))
assert all(0 <= float(x["first_rx_us"]) < float(x["end_us"]) for x in f)
for i in range(8):
    dsts = [int(x["dst"]) for x in f if int(x["src"]) == i]
    assert dsts == [(i + j) % 8 for j in range(1, 8)], (i, dsts)
assert sum(int(x["retx_pkts"]) for x in f) > 0  # 1% loss
PY
[ "$(strip "$tmp/d1")" = "$(strip "$tmp/d2")" ] || fail "same seed, summary differs"
[ "$(strip "$tmp/d1")" != "$(strip "$tmp/d3")" ] || fail "another seed, same summary"
[ "$(field "$tmp/d1" verify_errors)" = 0 ] || fail "determinism run: verify errors"
[ "$(field "$tmp/d1" corrupted_pkts)" != 0 ] || fail "no packet was corrupted"

# --- one long flow: goodput near, never above, the analytic ceiling ---
# The roce baseline (DCQCN starts at line rate) keeps the link busy:
# 100 Gb/s x 4096 / (4096 + headers + 66 on the wire) < 98.4, >= 95% of it.
"$sim" run --hosts 2 --size 16M --transport roce --out "$tmp/f" 2>/dev/null || fail "long flow"
python3 - "$tmp/f" <<'PY' || fail "long flow goodput"
import json, sys
d = json.load(open(sys.argv[1] + "/summary.json"))
g, top = d["goodput_gbps"], 100 * 4096 / (4096 + 66)
print("long flow goodput %.2f Gb/s (ceiling %.2f)" % (g, top))
sys.exit(0 if d["complete"] and 0.95 * top <= g <= top else 1)
PY

# --- every workload and transport, every byte checked ---
run_ok() {
	local name=$1; shift
	"$sim" run "$@" --out "$tmp/$name" 2>"$tmp/$name.err" ||
		fail "$name: exit $? $(tail -1 "$tmp/$name.err")"
	[ "$(field "$tmp/$name" complete)" = True ] || fail "$name: not complete"
	[ "$(field "$tmp/$name" verify_errors)" = 0 ] || fail "$name: verify errors"
	for f in summary.json timeseries.csv queues.csv goodput.png queue.png; do
		[ -s "$tmp/$name/$f" ] || fail "$name: no $f"
	done
}
run_ok flows_roce --hosts 4 --size 1M --transport roce --loss 0.001
run_ok incast --hosts 9 --workload incast --size 256K
run_ok perm --hosts 8 --hosts-per-leaf 4 --spines 2 --workload permutation --size 256K
run_ok a2a_planes --hosts 8 --planes 4 --workload alltoall --size 64K --qps-per-pair 2
run_ok allreduce --hosts 6 --workload allreduce --size 1536K --qps-per-pair 2
run_ok allreduce_roce --hosts 4 --workload allreduce --size 1M --transport roce --planes 2
run_ok lossy --hosts 2 --size 4M --loss 0.05 --corrupt 0.01
run_ok plane_down --hosts 4 --planes 2 --size 1M --fail plane=1,at=0
[ "$(field "$tmp/plane_down" drops_failed)" != 0 ] || fail "plane_down: nothing hit the failed plane"
c=$(field "$tmp/a2a_planes" connections)
[ "$c" = 112 ] || fail "a2a_planes: $c connections, not 8 x 7 x 2"
c=$(field "$tmp/allreduce" collective_us)
[ "$c" != None ] || fail "allreduce: no collective time"

# --- sweep: one table ---
"$sim" sweep --hosts 2 --size 256K --vary transport=metaroce,roce --vary loss=0,0.01 \
	--jobs 2 --out "$tmp/sw" 2>/dev/null || fail "sweep"
[ "$(wc -l <"$tmp/sw/sweep.csv")" = 5 ] || fail "sweep: not 4 rows: $(cat "$tmp/sw/sweep.csv")"
head -1 "$tmp/sw/sweep.csv" | grep -q '^transport,loss,complete,goodput_gbps' ||
	fail "sweep header: $(head -1 "$tmp/sw/sweep.csv")"

echo "sim_runs: $fails failed"
[ "$fails" = 0 ]
