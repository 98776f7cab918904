# tools/bench/chart.gp - the chart of `make bench`, from the data files
# bench.py writes: chart.svg and chart.png (both systems side by side, and
# skill discovery against the number of skills) and chart.txt (the ratios,
# as text to paste into a README).
# usage: gnuplot -e "dir='build/bench'" tools/bench/chart.gp
if (!exists("dir")) dir = 'build/bench'
side = dir.'/side.dat'
num(x) = x >= 100 ? sprintf("%.0f", x) : x >= 10 ? sprintf("%.1f", x) : sprintf("%.2f", x)
disc = dir.'/discovery.dat'

set encoding utf8
set style fill solid 0.85 border -1
set grid ytics
set key top left

# Left: absolute values on a log axis; right: discovery, log-log.
left_panel = 'set style data histogram; set style histogram clustered gap 1; \
	unset xlabel; set xrange [*:*]; set logscale y; set yrange [0.1:30000]; set format y "%g"; \
	set xtics nomirror rotate by -25 scale 0; unset y2tics; \
	set ylabel "median, log scale"; set title "one turn, same mock LLM (lower is better)"'
right_panel = 'unset style data; set logscale xy; set xrange [7:14000]; \
	set yrange [*:*]; set xtics rotate by 0 scale 1 nomirror; \
	set xlabel "skills"; set ylabel "wall (ms)"; set y2label "VmHWM (KiB)"; \
	set logscale y2; set y2tics; set ytics nomirror; \
	set title "skillbox: skills list"'

do for [t in "svg png"] {
	if (t eq "svg") {
		set terminal svg size 1100,460 dynamic noenhanced font "sans,11"
	} else {
		set terminal pngcairo size 1100,460 noenhanced font "sans,10"
	}
	set output dir.'/chart.'.t
	set multiplot layout 1,2
	@left_panel
	plot side using 2:xtic(1) title 'skillbox' lc rgb '#2a7ab0', \
	     '' using 3 title '@openai/agents (Node.js)' lc rgb '#d9822b', \
	     '' using ($0 - 1.0/6):2:(num($2)) with labels offset 0,0.6 notitle, \
	     '' using ($0 + 1.0/6):3:(num($3)) with labels offset 0,0.6 notitle
	@right_panel
	plot disc using 1:2 with linespoints pt 7 lc rgb '#2a7ab0' title 'wall (ms)', \
	     '' using 1:3 axes x1y2 with linespoints pt 5 lc rgb '#7a4ab0' title 'VmHWM (KiB)'
	unset multiplot
	unset output
	unset y2label
	unset y2tics
	unset logscale
	unset xlabel
}

# Text: how many times more the peer needs, one bar per figure.
set terminal dumb size 100,24 noenhanced
set output dir.'/chart.txt'
unset grid
unset title
unset xlabel
unset ylabel
set style data boxes
set boxwidth 0.5
set logscale y
stats side using 4 nooutput
set yrange [1:(STATS_max > 10 ? STATS_max * 4 : 40)]
set xrange [-0.6:5.6]
set xtics nomirror scale 0 rotate by 0
set ytics nomirror
set key off
set title "@openai/agents / skillbox (times, log scale)"
plot side using 0:4:xtic(5), '' using 0:4:(sprintf("%.1fx", $4)) with labels offset 0,1
unset output
