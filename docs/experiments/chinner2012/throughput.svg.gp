set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'throughput.svg'
set title 'write (until sync) and read-back rate'
set ylabel 'MiB/s'
set xlabel 'threads'
set logscale x 2
set grid
set key top left
set yrange [0:*]
plot 'points.dat' using 1:2 with linespoints lw 2 title 'ext4 write', 'points.dat' using 1:6 with linespoints lw 2 title 'xfs write', 'points.dat' using 1:3 with linespoints lw 2 title 'ext4 read', 'points.dat' using 1:7 with linespoints lw 2 title 'xfs read'
