set terminal pngcairo noenhanced size 960,600 font 'sans,11'
set output 'time.png'
set title 'time on the disk model (cold cache for ls -R and tar c)'
set ylabel 'seconds'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set grid ytics
set yrange [0:*]
plot 'phases.dat' using 2:xtic(1) title 'ext4', '' using 4 title 'xfs', '' using 6 title 'btrfs'
