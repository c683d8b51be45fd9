#!/usr/bin/env bash
# Build the packages as a packager would and try the .deb as a new user
# would (root; not part of CI: it builds the whole tree twice).
#
#   scripts/check_packages.sh [deb] [install] [rpm]     (default: all three)
#
# deb:     dpkg-buildpackage -us -uc -b in a scratch copy of the tree, then
#          lintian: any error or warning fails.
# install: dpkg -i of that .deb inside a private mount namespace whose /usr,
#          /etc and /var are overlays (the machine's own files never change,
#          and nothing remains afterwards), then, in two network namespaces
#          joined by a veth pair, `metaroce-ctl link add` and an unmodified
#          ibv_rc_pingpong through `metaroce-run` with an empty environment
#          (PATH only); then the metaroce-fabric .deb: --help, its manual
#          page formats without warnings, the shipped configurations check,
#          a two-host fabric comes up, takes a delay and goes down leaving
#          no namespace or process; then dpkg --purge.
# rpm:     `meson dist` tarball -> rpmbuild -bb redhat/metaroce.spec
#          (Debian's rpm: --nodeps, its database has no RPM packages).
set -u
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=${METAROCE_PKG_OUT:-/tmp/metaroce-pkg.$$}
steps=${*:-deb install rpm}
mkdir -p "$OUT"
fails=0
say() { echo "check_packages: $*"; }
bad() { say "FAIL: $*"; fails=$((fails + 1)); }

build_deb() {
	rm -rf "$OUT/deb" && mkdir -p "$OUT/deb/src"
	(cd "$SRC" && git ls-files -z | tar --null -cf - -T -) |
		tar -xf - -C "$OUT/deb/src" || { bad "copy of the tree"; return 1; }
	if ! (cd "$OUT/deb/src" && dpkg-buildpackage -us -uc -b) \
		>"$OUT/deb/build.log" 2>&1; then
		tail -30 "$OUT/deb/build.log"
		bad "dpkg-buildpackage (log: $OUT/deb/build.log)"
		return 1
	fi
	say "built: $(cd "$OUT/deb" && ls ./*.deb | tr '\n' ' ')"
	lintian -I --pedantic "$OUT"/deb/*.changes >"$OUT/deb/lintian.log" 2>&1
	sed 's/^/  lintian: /' "$OUT/deb/lintian.log"
	if grep -q '^[EW]:' "$OUT/deb/lintian.log"; then
		bad "lintian reports errors or warnings"
	else
		say "lintian: no error, no warning"
	fi
}

# Runs inside the private mount namespace (see above).
install_inner() {
	local deb=$1 o=$OUT/ovl tag=$$ rc=0 d
	for d in usr etc var; do
		mkdir -p "$o/$d.up" "$o/$d.work"
		mount -t overlay overlay -o \
			"lowerdir=/$d,upperdir=$o/$d.up,workdir=$o/$d.work" "/$d" ||
			{ echo "cannot overlay /$d"; return 1; }
	done
	mount -t tmpfs tmpfs /run/metaroce 2>/dev/null ||
		{ mkdir -p /run/metaroce && mount -t tmpfs tmpfs /run/metaroce; }
	dpkg -i "$deb" || return 1
	command -v metaroce-ctl metaroce-run
	ip netns add pkgA$tag && ip netns add pkgB$tag || return 1
	ip link add pkgva$tag netns pkgA$tag type veth peer name pkgvb$tag \
		netns pkgB$tag
	ip -n pkgA$tag link set pkgva$tag up && ip -n pkgB$tag link set pkgvb$tag up
	ip -n pkgA$tag addr add 10.87.0.1/24 dev pkgva$tag
	ip -n pkgB$tag addr add 10.87.0.2/24 dev pkgvb$tag
	ip netns exec pkgA$tag env -i PATH=/usr/bin:/bin metaroce-ctl link add mr0 \
		--port net_af_packet0,iface=pkgva$tag --ip 10.88.0.1/24 &&
		ip netns exec pkgB$tag env -i PATH=/usr/bin:/bin metaroce-ctl link add mr0 \
			--port net_af_packet0,iface=pkgvb$tag --ip 10.88.0.2/24 || rc=1
	if [ $rc = 0 ]; then
		ip netns exec pkgA$tag env -i PATH=/usr/bin:/bin metaroce-run ibv_devinfo -d mr0 |
			grep -E "hca_id|transport|state"
		ip netns exec pkgA$tag env -i PATH=/usr/bin:/bin timeout 60 \
			metaroce-run ibv_rc_pingpong -d mr0 -g 0 -n 100 >"$OUT/srv.log" 2>&1 &
		local spid=$!
		sleep 1.5
		ip netns exec pkgB$tag env -i PATH=/usr/bin:/bin timeout 60 \
			metaroce-run ibv_rc_pingpong -d mr0 -g 0 -n 100 10.87.0.1 \
			>"$OUT/cli.log" 2>&1 || rc=1
		wait $spid || rc=1
		sed 's/^/  server: /' "$OUT/srv.log"
		sed 's/^/  client: /' "$OUT/cli.log"
	fi
	ip netns exec pkgA$tag metaroce-ctl link del mr0
	ip netns exec pkgB$tag metaroce-ctl link del mr0
	ip netns del pkgA$tag
	ip netns del pkgB$tag
	install_fabric_inner "$(dirname "$deb")"/metaroce-fabric_*_amd64.deb || rc=1
	dpkg --purge metaroce-fabric metaroce >/dev/null || rc=1
	return $rc
}

# The fabric package, installed as a user would use it (inside the same
# private mount namespace as install_inner).
install_fabric_inner() {
	local deb=$1 tag=$$ rc=0 w out c pids
	dpkg -i "$deb" || return 1
	env -i PATH=/usr/bin:/bin metaroce-fabric --help >/dev/null ||
		{ echo "metaroce-fabric --help failed"; rc=1; }
	out=$(MANWIDTH=80 man --warnings -E UTF-8 metaroce-fabric 2>&1 >/dev/null)
	[ -z "$out" ] || { echo "metaroce-fabric(8): $out"; rc=1; }
	for c in /usr/share/metaroce/fabric/configs/*.conf; do
		env -i PATH=/usr/bin:/bin metaroce-fabric check "$c" || rc=1
	done
	w=$(mktemp -d)
	printf 'name pk%s\nplanes 1\nhost a leaf=1\nhost b leaf=1\n' \
		"${tag:0:6}" >"$w/f.conf"
	export METAROCE_FABRIC_DIR=$w/state
	if metaroce-fabric up "$w/f.conf"; then
		metaroce-fabric set 'p1/a-l1' delay=1ms || rc=1
		metaroce-fabric show | grep -E "^link p1/a>l1 .*delay=1000us" || rc=1
		pids=$(python3 -c 'import json, sys
st = json.load(open(sys.argv[1]))
print(" ".join(str(d["delay_pid"]) for d in st["dirs"].values()
               if d.get("delay_pid")))' "$METAROCE_FABRIC_DIR/pk${tag:0:6}.json")
		echo "delay lines: $pids"
		metaroce-fabric down || rc=1
		[ -z "$(ip netns list | grep "^pk${tag:0:6}-")" ] ||
			{ echo "down left namespaces"; rc=1; }
		for c in $pids; do
			! kill -0 "$c" 2>/dev/null || { echo "delay line $c left"; rc=1; }
		done
	else
		rc=1
	fi
	rm -rf "$w"
	return $rc
}

try_install() {
	local deb
	deb=$(ls "$OUT"/deb/metaroce_*_amd64.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { bad "no .deb built in $OUT/deb"; return 1; }
	export OUT
	if unshare -m --propagation private bash -c \
		"$(declare -f install_inner install_fabric_inner); install_inner '$deb'"; then
		say "install: link add + ibv_rc_pingpong through metaroce-run work; metaroce-fabric up/set/down"
	else
		bad "install test"
	fi
	rm -rf "$OUT/ovl"
}

build_rpm() {
	local top=$OUT/rpm ver
	ver=$(sed -n "s/^\tversion: '\(.*\)',/\1/p" "$SRC/meson.build")
	rm -rf "$top" "$OUT/dist" && mkdir -p "$top"/{SOURCES,BUILD,RPMS,SRPMS,SPECS}
	if ! (meson setup "$OUT/dist" "$SRC" >/dev/null &&
		meson dist -C "$OUT/dist" --no-tests --formats xztar) \
		>"$top/dist.log" 2>&1; then
		tail -20 "$top/dist.log"
		bad "meson dist (uncommitted changes are refused)"
		return 1
	fi
	cp "$OUT/dist/meson-dist/metaroce-$ver.tar.xz" "$top/SOURCES/"
	if rpmbuild --define "_topdir $top" --nodeps -bb "$SRC/redhat/metaroce.spec" \
		>"$top/build.log" 2>&1; then
		say "rpm: $(cd "$top/RPMS" && find . -name '*.rpm' | tr '\n' ' ')"
	else
		tail -30 "$top/build.log"
		bad "rpmbuild (log: $top/build.log)"
	fi
}

for s in $steps; do
	case $s in
	deb) build_deb ;;
	install) try_install ;;
	rpm) build_rpm ;;
	*) echo "usage: $0 [deb] [install] [rpm]" >&2; exit 2 ;;
	esac
done
say "$fails failed (outputs in $OUT)"
[ $fails = 0 ]
