#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Draw bench/wire's plots from its data sets, so anyone can re-plot without
# re-measuring (bench/wire/run.sh writes the data and calls this):
#   DIR/data/bw64k.csv -> DIR/bw64k.svg  64 KiB bandwidth: testpmd ceiling,
#                                        kernel TCP, lib/dp, ib_write_bw,
#                                        ib_send_bw (median, min-max bars)
#   DIR/data/sweep.csv -> DIR/sweep.svg  bandwidth over message sizes, with
#                                        the ceiling as a line (if swept)
#   DIR/data/lat64.csv -> DIR/lat64.svg  64 B latency (t_min, t_typical,
#                                        p99) against the lib/dp round trip
#   DIR/data/meta.csv: date, commit, machine and command, for the titles.
# Usage: bench/wire/plot.sh [DIR, default bench/wire]
# PLOT_EXT=png draws PNG instead (same data, for viewers without SVG).
set -euo pipefail
dir=${1:-$(dirname "$0")}
ext=${PLOT_EXT:-svg}
data=$dir/data

command -v gnuplot >/dev/null ||
	{ echo "plot.sh: gnuplot missing (apt-get install gnuplot-nox)" >&2; exit 1; }
for f in bw64k.csv lat64.csv meta.csv; do
	[ -s "$data/$f" ] ||
		{ echo "plot.sh: no $data/$f (bench/wire/run.sh writes it)" >&2; exit 1; }
done
case $ext in
svg) term="svg size 900,540 noenhanced font 'sans,12' background rgb 'white'" ;;
png) term="pngcairo size 900,540 noenhanced font 'sans,10'" ;;
*) echo "plot.sh: PLOT_EXT must be svg or png, not '$ext'" >&2; exit 1 ;;
esac
# meta.csv: key,value lines; the value may hold commas.
meta() {
	awk -F, -v k="$1" '$1 == k {sub(/^[^,]*,/, ""); print; f = 1; exit}
		END {if (!f) print "?"}' "$data/meta.csv"
}
sub="one veth link (af_packet), $(meta date), commit $(meta commit), $(meta machine)"
# The references as numbers gnuplot can test (NaN: not measured).
ref() {
	awk -F, -v k="$1" '$1 == k {v = $2} END {print (v == "" ? "NaN" : v)}' \
		"$data/bw64k.csv"
}
ceil=$(ref "testpmd ceiling")
tcp=$(ref "kernel TCP (iperf3)")

# Rows of a data set (less its header line), for the x range of bars.
rows() { echo $(($(wc -l <"$data/$1") - 1)); }
# Shared preamble: terminal, CSV with a header line, references. A figure
# that was not measured is NaN in the CSV: no bar, and a "no result" note.
pre="set terminal $term
set datafile separator ','
set datafile columnheaders
ceil = $ceil
tcp = $tcp
set grid ytics
set xtics nomirror
set ytics nomirror
t80 = ceil == ceil ? sprintf('80%% of the testpmd ceiling: %.2f Gb/s (issue 4 target)', 0.8 * ceil) : ''
tceil = ceil == ceil ? sprintf('testpmd ceiling, 4214 B frames: %.2f Gb/s', ceil) : 'testpmd ceiling: not measured'
ttcp = tcp == tcp ? sprintf('kernel TCP, iperf3: %.2f Gb/s', tcp) : 'kernel TCP: not measured'"

gnuplot <<EOF
$pre
set output '$dir/bw64k.$ext'
set title "Bandwidth at 64 KiB messages, Gb/s (bars: median; whiskers: min-max of the runs)\n$sub"
set ylabel 'Gb/s'
set style fill solid 0.85 border -1
set boxwidth 0.6
stats '$data/bw64k.csv' using 4 nooutput
top = STATS_max
top = (ceil == ceil && ceil > top) ? ceil : top
set xrange [-0.6:$(rows bw64k.csv) - 0.4]
set yrange [0:top * 1.3]
set bmargin 5
set key top right
is_verbs(s) = s[1:3] eq 'ib_'
color(s) = is_verbs(s) ? 0x4477aa : 0x999999
share(v) = (ceil == ceil && ceil > 0) ? sprintf(' (%.0f%%)', 100 * v / ceil) : ''
if (ceil == ceil) {
	set arrow 1 from graph 0, first 0.8 * ceil to graph 1, \
		first 0.8 * ceil nohead dt 2 lc rgb '#cc3311' lw 1.5 front
}
plot '$data/bw64k.csv' using 0:2:(color(strcol(1))):xtic(strcol(1) . "\n" . strcol(6)) \
		with boxes lc rgb variable notitle, \
	'' using 0:3:(0):(\$4 - \$3) with vectors heads size 0.08, 90 \
		lc rgb 'black' notitle, \
	'' using 0:4:(sprintf('%.2f%s', \$2, is_verbs(strcol(1)) ? share(\$2) : '')) \
		with labels offset 0, 0.8 notitle, \
	'' using 0:(strcol(2) eq 'NaN' ? top * 0.05 : NaN):('no result') \
		with labels notitle, \
	NaN with lines dt 2 lc rgb '#cc3311' lw 1.5 title t80
EOF

if [ -s "$data/sweep.csv" ]; then
	gnuplot <<EOF
$pre
set output '$dir/sweep.$ext'
set title "Bandwidth over message size, Gb/s (perftest -s SIZE, average)\n$sub"
set xlabel 'message size (bytes)'
set ylabel 'Gb/s'
set logscale x 2
set format x '%.0b %BB'
set key top left
set xtics 2
top = 0
do for [c in "3 4"] {
	stats '$data/sweep.csv' using int(c) nooutput
	top = STATS_max > top ? STATS_max : top
}
top = (ceil == ceil && ceil > top) ? ceil : top
top = (tcp == tcp && tcp > top) ? tcp : top
set yrange [0:top * 1.5]
plot '$data/sweep.csv' using 1:3 with linespoints lw 2 pt 7 \
		lc rgb '#4477aa' title 'ib_write_bw', \
	'' using 1:4 with linespoints lw 2 pt 5 lc rgb '#228833' \
		title 'ib_send_bw', \
	ceil with lines dt 1 lw 2 lc rgb '#cc3311' title tceil, \
	0.8 * ceil with lines dt 2 lw 1.5 lc rgb '#cc3311' title t80, \
	tcp with lines dt 3 lw 2 lc rgb '#777777' title ttcp
EOF
fi

gnuplot <<EOF
$pre
set output '$dir/lat64.$ext'
set title "Latency of 64 B messages, us, log scale (RTT/2: half the round trip, as perftest prints it)\n$sub"
set ylabel 'microseconds'
set logscale y 10
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left Left reverse
top = 0; bot = 1e9
do for [c in "3 4 5"] {
	stats '$data/lat64.csv' using int(c) nooutput
	top = STATS_max > top ? STATS_max : top
	bot = STATS_min < bot ? STATS_min : bot
}
set xrange [-0.6:$(rows lat64.csv) - 0.4]
set yrange [bot / 2:top * 20]
set bmargin 5
# Clustered bars: N columns and gap G put column j of row i at
# i + (j - (N - 1) / 2) / (N + G); the value labels sit on those.
N = 3.0; G = 1.0
x(j) = column(0) + (j - (N - 1) / 2) / (N + G)
lab(v) = v < 10 ? sprintf('%.2f', v) : sprintf('%.0f', v)
plot '$data/lat64.csv' using 3:xtic(sprintf("%s\n(%s)", strcol(1), strcol(2))) \
		title 't_min' lc rgb '#66ccee', \
	'' using 4 title 't_typical (median; lib/dp: p50)' lc rgb '#4477aa', \
	'' using 5 title 'p99' lc rgb '#ee6677', \
	'' using (x(0)):3:(lab(\$3)) with labels offset 0, 0.7 font ',9' notitle, \
	'' using (x(1)):4:(lab(\$4)) with labels offset 0, 0.7 font ',9' notitle, \
	'' using (x(2)):5:(lab(\$5)) with labels offset 0, 0.7 font ',9' notitle, \
	'' using 0:(strcol(4) eq 'NaN' ? bot : NaN):('no result') with labels \
		offset 0, 1 notitle
EOF
echo "plot.sh: wrote $dir/bw64k.$ext$([ -s "$data/sweep.csv" ] && echo " $dir/sweep.$ext") $dir/lat64.$ext"
