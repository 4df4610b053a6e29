set terminal pngcairo noenhanced size 960,600 font 'sans,11'
set output 'fill.png'
set title 'fill level reached'
set ylabel 'percent of blocks in use'
set yrange [0:105]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left font ',8'
set xtics rotate by -20 font ',9'
set grid ytics
plot 'runs.dat' using 3:xtic(1) title 'ext4, RAM (nvram model)', '' using 5 title 'ext4, disk (hdd model)', '' using 7 title 'xfs, RAM (nvram model)', '' using 9 title 'xfs, disk (hdd model)', '' using 11 title 'btrfs, RAM (nvram model)', '' using 13 title 'btrfs, disk (hdd model)'
