set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'untar.svg'
set title 'untar, copy after copy until the volume is full (the last one fails)'
set xlabel 'copy'
set ylabel 'seconds'
set grid
set yrange [0:*]
set key top left
plot 'untar.dat' using 1:2 with linespoints lw 2 title 'RAM (nvram model)', 'untar.dat' using 1:3 with linespoints lw 2 title 'disk (hdd model)'
