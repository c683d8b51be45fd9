#!/usr/bin/env bash
# What the packages install besides the programs: the manual pages format
# without warnings and name every command and knob; the bash completion
# completes commands, options, device names and knob names; the systemd
# unit runs the commands that exist.
. "$(dirname "$0")/lib.sh"
cli_init "$@"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "$(dirname "$CTL")/.." && pwd)

# Manual pages (as configured into the build tree).
for page in utils/metaroce-ctl.8 utils/metaroce-run.1 utils/metaroce-sim.1 \
	utils/metaroce-fabric.8; do
	[ -f "$BUILD/$page" ] || { fail "$page was not made"; continue; }
	out=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$BUILD/$page" 2>&1 >/dev/null)
	[ -z "$out" ] && pass "$page formats cleanly" || fail "$page: $out"
done
man8=$(MANWIDTH=200 man -l "$BUILD/utils/metaroce-ctl.8" 2>/dev/null)
for c in "link add" "link set" "link show" "link del" "link restore" "link gc" stats knobs; do
	check "metaroce-ctl(8) documents $c" "metaroce-ctl $c" "$man8"
done
while read -r name _; do
	check "metaroce-ctl(8) documents knob $name" "^ +$name \(" "$man8"
done < <("$CTL" knobs | tail -n +2)

SIM=$BUILD/utils/metaroce-sim/metaroce-sim
if [ -x "$SIM" ]; then
	man1=$(MANWIDTH=200 man -l "$BUILD/utils/metaroce-sim.1" 2>/dev/null)
	n=0
	while read -r key _; do
		grep -qE "^ +$key( |$)" <<<"$man1" || { fail "metaroce-sim(1) lacks $key"; n=1; }
	done < <("$SIM" keys | grep -E '^  --')
	[ $n = 0 ] && pass "metaroce-sim(1) lists every key of metaroce-sim keys"
fi

FAB=$BUILD/utils/metaroce-fabric/metaroce-fabric
if [ -x "$FAB" ]; then
	man8f=$(MANWIDTH=200 man -l "$BUILD/utils/metaroce-fabric.8" 2>/dev/null)
	for c in check up down show set stats; do
		check "metaroce-fabric(8) documents $c" "$c" "$man8f"
	done
	# Every link key the parser knows (its own error lists them).
	printf 'name mani\nplanes 1\nhost a\nhost b\nlink * nokey=1\n' >"$TMP/k.conf"
	keys=$("$FAB" check "$TMP/k.conf" 2>&1 | sed -n 's/.*(known: \(.*\))$/\1/p' | tr -d ,)
	[ -n "$keys" ] || fail "metaroce-fabric check did not list the link keys"
	for k in $keys; do
		check "metaroce-fabric(8) documents link key $k" "\b$k\b" "$man8f"
	done
	"$FAB" --help >/dev/null && pass "metaroce-fabric --help" ||
		fail "metaroce-fabric --help: exit $?"
fi

# Bash completion, with the tools of this build first in PATH.
BC=/usr/share/bash-completion/bash_completion
if [ -r "$BC" ]; then
	comp() { # WORDS...: what <TAB> after them offers
		PATH=$(dirname "$CTL"):$PATH bash -c '
			. '"$BC"'; . '"$SRC"'/utils/completion/metaroce-ctl
			COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
			COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
			_metaroce_ctl metaroce-ctl "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
			printf "%s\n" "${COMPREPLY[@]}"' comp "$@"
	}
	check "completes commands" '^link$' "$(comp metaroce-ctl '')"
	check "completes link subcommands" '^restore$' "$(comp metaroce-ctl link re)"
	check "completes add options" '^--persist$' "$(comp metaroce-ctl link add mr0 --per)"
	check "completes knob names after --opt" '^dp_spin_us=$' "$(comp metaroce-ctl link set mr0 --opt dp_sp)"
	check "completes --mtu values" '^2048$' "$(comp metaroce-ctl link add mr0 --mtu 2)"
else
	fail "bash-completion is not installed ($BC)"
fi

# The unit: its commands exist in this metaroce-ctl and refuse nothing.
unit=$BUILD/utils/metaroce.service
for verb in ExecStart ExecStop; do
	cmdline=$(sed -n "s/^$verb=[^ ]*metaroce-ctl //p" "$unit")
	[ -n "$cmdline" ] || { fail "$unit: no $verb of metaroce-ctl"; continue; }
	# An empty confdir: both must succeed and change nothing.
	METAROCE_CONFDIR=$TMP/etc "$CTL" $cmdline && pass "$verb (metaroce-ctl $cmdline) runs" ||
		fail "$verb: metaroce-ctl $cmdline exit $?"
done
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify --man=no "$unit" 2>&1 | grep -v "is not executable: No such file")
	[ -z "$out" ] && pass "systemd-analyze verify" || fail "systemd-analyze: $out"
fi
cli_done
