#!/usr/bin/env bash
# Install, build and run every test: the normal build (all suites), the
# sans-IO core's unit tests under ASan+UBSan, and the fuzz targets for a
# bounded time. Ends with one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD

scripts/deps.sh || { echo "0 passed, 1 failed"; exit 1; }

builds=()
build_failed=0

run_build() { # name, meson test args, then -- meson setup args
	local dir=$1 testargs=$2
	shift 2
	rm -rf "$dir"
	if ! meson setup "$dir" "$@" >"$dir.setup.log" 2>&1; then
		cat "$dir.setup.log" >&2
		build_failed=$((build_failed + 1))
		return
	fi
	if ! ninja -C "$dir" >"$dir.ninja.log" 2>&1; then
		tail -50 "$dir.ninja.log" >&2
		build_failed=$((build_failed + 1))
		return
	fi
	# shellcheck disable=SC2086
	meson test -C "$dir" --print-errorlogs $testargs
	builds+=("$dir")
}

run_build build "--num-processes 1"
run_build build-san "--suite unit --num-processes 2" \
	-Dunit_only=true -Db_sanitize=address,undefined -Db_lundef=false
CC=clang run_build build-fuzz "--suite fuzz --num-processes 1" \
	-Dunit_only=true -Dfuzz=true
# What the packages build (-O3): some warnings (format truncation) only
# appear with optimisation, and warnings are errors.
run_build build-release "--suite abi --num-processes 1" -Dbuildtype=release

python3 - "$build_failed" "${builds[@]}" <<'PY'
import json, sys
failed = int(sys.argv[1])
passed = skipped = 0
for d in sys.argv[2:]:
    try:
        lines = open(f"{d}/meson-logs/testlog.json").read().splitlines()
    except OSError:
        failed += 1
        continue
    for line in lines:
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
if skipped:
    print(f"{skipped} skipped")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
PY
