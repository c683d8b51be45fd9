#!/usr/bin/env bash
# Draw bench/sim's plots from the committed data sets (bench/sim/data).
# Usage: bench/sim/plot.sh   (PLOT_EXT=svg for SVG instead of PNG)
set -euo pipefail
cd "$(dirname "$0")"
ext=${PLOT_EXT:-png}
term="pngcairo size 900,500"
[ "$ext" = png ] || term="svg size 900,500"
command -v gnuplot >/dev/null ||
	{ echo "plot.sh: gnuplot missing (scripts/deps.sh installs it)" >&2; exit 1; }
# One CSV per transport from a sweep table: the rows of that transport.
split() { # sweep.csv transport -> stdout
	awk -F, -v t="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["transport"] == t' "$1"
}
d=data
# gnuplot with the lines every plot starts with, for output NAME.EXT; the
# plot's own lines on stdin.
gp() { # NAME
	{
		printf "set terminal %s\nset output '%s.%s'\n" "$term" "$1" "$ext"
		echo "set datafile separator ','"
		cat
	} | gnuplot
}
# An all-to-all plane sweep: aggregate goodput against planes, both
# transports and the line rate of HOSTS x 100 Gb/s per plane.
planes() { # NAME HOSTS TITLE
	[ -f "$d/$1/sweep.csv" ] || return 0
	split "$d/$1/sweep.csv" metaroce >/tmp/plot_m.$$
	split "$d/$1/sweep.csv" roce >/tmp/plot_r.$$
	# a sweep of metaroce alone (planes4k1m) has no baseline line
	roce=
	[ -s /tmp/plot_r.$$ ] &&
		roce="'/tmp/plot_r.$$' using 1:4 with linespoints title 'roce (1 plane per QP)', \\"$'\n'
	gp "$1" <<GP
set title '$3'
set xlabel 'planes'; set ylabel 'aggregate goodput (Gb/s)'
set logscale x 2; set xtics (1, 2, 4, 8); set grid; set key top left
plot '/tmp/plot_m.$$' using 1:4 with linespoints title 'metaroce', \\
$roce     x * $2 * 100 * 4096 / 4162 with lines dt 2 title 'line rate'
GP
}
if [ -f $d/loss/sweep.csv ]; then
	split $d/loss/sweep.csv metaroce >/tmp/plot_m.$$
	split $d/loss/sweep.csv roce >/tmp/plot_r.$$
	gp loss <<GP
set title 'one long flow (8 MiB, 100 Gb/s) against random loss'
set xlabel 'loss rate (per packet)'; set ylabel 'goodput (Gb/s)'
set logscale x; set xrange [0.0005:0.2]; set grid; set key top right
plot '/tmp/plot_m.$$' using (\$1 > 0 ? \$1 : 0.0005):4 with linespoints title 'metaroce', \
     '/tmp/plot_r.$$' using (\$1 > 0 ? \$1 : 0.0005):4 with linespoints title 'roce (go-back-N, DCQCN, IB timeout 14)'
GP
fi
planes planes 16 'all-to-all, 16 hosts x 256 KiB per pair, 100 Gb/s per plane'
planes planes4k 64 'all-to-all, 64 hosts (4032 connections) x 256 KiB per pair, 100 Gb/s per plane'
planes planes4k1m 64 'all-to-all, 64 hosts (4032 connections) x 1 MiB per pair, 100 Gb/s per plane'
planes planes4k4m 64 'all-to-all, 64 hosts (4032 connections) x 4 MiB per pair, 100 Gb/s per plane'
if [ -d $d/blackhole ]; then
	gp blackhole <<GP
set title 'all-to-all, 16 hosts x 1 MiB, 4 planes; spine 0 of plane 1 black-holes at 100 us'
set xlabel 'time (us)'; set ylabel 'Gb/s'; set grid; set key outside
set xrange [0:2000]
f='$d/blackhole/transport=metaroce/timeseries.csv'
plot f using 1:2 with lines lw 2 title 'metaroce goodput', \
     f using 1:4 with lines title 'plane 1', \
     '$d/blackhole/transport=roce/timeseries.csv' using 1:2 with lines lw 2 title 'roce goodput'
GP
fi
if [ -d $d/incast ]; then
	gp incast <<GP
set title '64-to-1 incast (256 KiB each, one leaf, 1 MiB buffer): deepest switch queue'
set xlabel 'time (us)'; set ylabel 'queue (bytes)'; set grid
set xrange [0:3000]
plot '$d/incast/transport=metaroce/timeseries.csv' using 1:(column('queue_max_bytes')) with lines title 'metaroce', \
     '$d/incast/transport=roce/timeseries.csv' using 1:(column('queue_max_bytes')) with lines title 'roce'
GP
fi
if [ -d $d/planefail ]; then
	gp planefail <<GP
set title 'all-to-all, 16 hosts x 1 MiB, 4 planes; plane 1 fails at 100 us'
set xlabel 'time (us)'; set ylabel 'Gb/s'; set grid; set key outside
set xrange [0:4000]
f='$d/planefail/transport=metaroce/timeseries.csv'
plot f using 1:2 with lines lw 2 title 'metaroce goodput', \
     f using 1:3 with lines title 'plane 0', f using 1:4 with lines title 'plane 1', \
     f using 1:5 with lines title 'plane 2', f using 1:6 with lines title 'plane 3', \
     '$d/planefail/transport=roce/timeseries.csv' using 1:2 with lines lw 2 title 'roce goodput'
GP
fi
# The 64-host all-to-all (figure 5): when each of the 4032 connections
# finished, sorted (lossless; at 1% the baseline's tail is 134 ms), so the
# tail the collective waits for shows against the baseline's.
a2a=$d/alltoall64
if [ -f "$a2a/loss=0,transport=metaroce/flows.csv" ] &&
	[ -f "$a2a/loss=0,transport=roce/flows.csv" ]; then
	for t in metaroce roce; do
		awk -F, 'NR > 1 { print $5 }' "$a2a/loss=0,transport=$t/flows.csv" |
			sort -g | awk '{ print NR / 4032.0 "," $1 }' >/tmp/plot_$t.$$
	done
	gp alltoall64 <<GP
set title 'all-to-all, 64 hosts x 64 KiB per pair, lossless: connections finished'
set xlabel 'time (us)'; set ylabel 'fraction of the 4032 connections'
set grid; set key top left; set yrange [0:1]
plot '/tmp/plot_metaroce.$$' using 2:1 with lines lw 2 title 'metaroce', \
     '/tmp/plot_roce.$$' using 2:1 with lines lw 2 title 'roce'
GP
	rm -f /tmp/plot_metaroce.$$ /tmp/plot_roce.$$
fi
rm -f /tmp/plot_m.$$ /tmp/plot_r.$$
ls ./*."$ext"
