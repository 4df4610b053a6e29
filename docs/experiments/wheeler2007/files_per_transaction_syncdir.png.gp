set terminal pngcairo noenhanced size 960,600 font 'sans,11'
set output 'files_per_transaction_syncdir.png'
set title 'files per journal transaction, in a chattr +S directory'
set xlabel 'threads'
set ylabel 'files per transaction'
set logscale x
set key outside right
set grid
set yrange [0:*]
set xtics (1,2,3,4,6,8,12,16,24,32,40)
set xrange [0.90:44.00]
plot 'points_syncdir.dat' using 1:3 with linespoints lw 2 lc 1 dt 1 title 'NVRAM, max_batch_time default', 'points_syncdir.dat' using 1:5 with linespoints lw 2 lc 1 dt 2 title 'NVRAM, max_batch_time=0', 'points_syncdir.dat' using 1:7 with linespoints lw 2 lc 2 dt 1 title 'SSD, max_batch_time default', 'points_syncdir.dat' using 1:9 with linespoints lw 2 lc 2 dt 2 title 'SSD, max_batch_time=0', 'points_syncdir.dat' using 1:11 with linespoints lw 2 lc 3 dt 1 title 'disk, max_batch_time default', 'points_syncdir.dat' using 1:13 with linespoints lw 2 lc 3 dt 2 title 'disk, max_batch_time=0', 'points_syncdir.dat' using 1:15 with linespoints lw 2 lc 1 dt 3 title 'xfs, log on NVRAM', 'points_syncdir.dat' using 1:17 with linespoints lw 2 lc 2 dt 3 title 'xfs, log on SSD', 'points_syncdir.dat' using 1:19 with linespoints lw 2 lc 3 dt 3 title 'xfs, log on disk'
