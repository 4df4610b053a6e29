set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'untar.svg'
set title 'untar, copy after copy until the volume is full (the last one fails)'
set xlabel 'copy'
set ylabel 'seconds'
set grid
set yrange [0:*]
set key top left
plot 'untar.dat' using 1:2 with linespoints lw 2 title 'ext4, RAM (nvram model)', 'untar.dat' using 1:3 with linespoints lw 2 title 'ext4, disk (hdd model)', 'untar.dat' using 1:4 with linespoints lw 2 title 'xfs, RAM (nvram model)', 'untar.dat' using 1:5 with linespoints lw 2 title 'xfs, disk (hdd model)', 'untar.dat' using 1:6 with linespoints lw 2 title 'btrfs, RAM (nvram model)', 'untar.dat' using 1:7 with linespoints lw 2 title 'btrfs, disk (hdd model)'
