#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Draw bench/core's plot from its data set, so anyone can re-plot without
# re-measuring: DIR/data/core.csv (mrbench-core -C) and DIR/data/meta.csv
# (date, commit, machine, command of the run) -> DIR/core.svg.
# Usage: bench/core/plot.sh [DIR, default bench/core]
# PLOT_EXT=png draws PNG instead (same data, for viewers without SVG).
set -euo pipefail
dir=${1:-$(dirname "$0")}
ext=${PLOT_EXT:-svg}

command -v gnuplot >/dev/null ||
	{ echo "plot.sh: gnuplot missing (apt-get install gnuplot-nox)" >&2; exit 1; }
for f in core.csv meta.csv; do
	[ -s "$dir/data/$f" ] ||
		{ echo "plot.sh: no $dir/data/$f (bench/core/run.sh writes it)" >&2; exit 1; }
done
case $ext in
svg) term="svg size 860,500 font 'sans,12' background rgb 'white'" ;;
png) term="pngcairo size 860,500 font 'sans,10'" ;;
*) echo "plot.sh: PLOT_EXT must be svg or png, not '$ext'" >&2; exit 1 ;;
esac
# meta.csv: key,value lines; the value may hold commas.
meta() {
	awk -F, -v k="$1" '$1 == k {sub(/^[^,]*,/, ""); print; f = 1; exit}
		END {if (!f) print "?"}' "$dir/data/meta.csv"
}
sub="$(meta date), commit $(meta commit), $(meta machine)"

gnuplot <<EOF
set terminal $term
set output '$dir/core.$ext'
set datafile separator ','
set datafile columnheaders
set title "lib/core cost: 1 MiB RDMA WRITEs over the unit harness's link, one core\n$sub"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel 'million packets per second per core (Mpps)'
set xlabel 'mode (metaroce: 4 paths, selective retransmit; gbn: 1 path, go-back-N), random loss both ways'
set grid ytics
set key top left Left reverse
top = 0
do for [c in "8 9 12"] {
	stats '$dir/data/core.csv' using int(c) nooutput
	top = STATS_max > top ? STATS_max : top
}
set xrange [-0.6:STATS_records - 0.4]
set yrange [0:top * 1.4]
set xtics nomirror
# Clustered bars: N columns and gap G put column j of row i at
# i + (j - (N - 1) / 2) / (N + G); the value labels sit on those.
N = 3.0; G = 1.0
x(j) = column(0) + (j - (N - 1) / 2) / (N + G)
plot '$dir/data/core.csv' using 8:xtic(sprintf("%s %s%%", strcol(1), strcol(2))) \
		title 'data packets incl. retransmissions' lc rgb '#4477aa', \
	'' using 9 title 'all packets (data + ACK)' lc rgb '#66ccee', \
	'' using 12 title 'data packets, harness cost subtracted (core alone)' \
		lc rgb '#228833', \
	'' using (x(0)):8:(sprintf('%.2f', \$8)) with labels offset 0, 0.7 notitle, \
	'' using (x(1)):9:(sprintf('%.2f', \$9)) with labels offset 0, 0.7 notitle, \
	'' using (x(2)):12:(sprintf('%.2f', \$12)) with labels offset 0, 0.7 notitle
EOF
echo "plot.sh: wrote $dir/core.$ext"
