set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'completion.svg'
set title 'synctest completion time (lower is better)'
set xlabel 'processes per directory'
set ylabel 'seconds'
set logscale x
set key top left
set grid
set yrange [0:*]
plot 'completion.dat' using 1:2 with linespoints lw 2 title 'internal, hdd', 'completion.dat' using 1:3 with linespoints lw 2 title 'external, nvram', 'completion.dat' using 1:4 with linespoints lw 2 title 'external, hdd', 'completion.dat' using 1:5 with linespoints lw 2 title 'internal 16M, hdd'
