set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'extents.svg'
set title 'extents per file (filefrag)'
set ylabel 'extents'
set xlabel 'threads'
set logscale x 2
set grid
set key top left
set yrange [0:*]
plot 'points.dat' using 1:4 with linespoints lw 2 title 'ext4', 'points.dat' using 1:8 with linespoints lw 2 title 'xfs'
