set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'time.svg'
set title 'time to finish or to fail'
set ylabel 'seconds'
set logscale y
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left font ',8'
set xtics rotate by -20 font ',9'
set grid ytics
plot 'runs.dat' using 2:xtic(1) title 'ext4, RAM (nvram model)', '' using 4 title 'ext4, disk (hdd model)', '' using 6 title 'xfs, RAM (nvram model)', '' using 8 title 'xfs, disk (hdd model)', '' using 10 title 'btrfs, RAM (nvram model)', '' using 12 title 'btrfs, disk (hdd model)'
