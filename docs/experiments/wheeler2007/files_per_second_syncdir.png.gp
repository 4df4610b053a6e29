set terminal pngcairo noenhanced size 960,600 font 'sans,11'
set output 'files_per_second_syncdir.png'
set title 'fs_mark, 10240-byte files, one directory, in a chattr +S directory (higher is better)'
set xlabel 'threads'
set ylabel 'files/s'
set logscale xy
set key outside right
set grid
set xtics (1,2,3,4,6,8,12,16,24,32,40)
set xrange [0.90:44.00]
plot 'points_syncdir.dat' using 1:2 with linespoints lw 2 lc 1 dt 1 title 'NVRAM, max_batch_time default', 'points_syncdir.dat' using 1:4 with linespoints lw 2 lc 1 dt 2 title 'NVRAM, max_batch_time=0', 'points_syncdir.dat' using 1:6 with linespoints lw 2 lc 2 dt 1 title 'SSD, max_batch_time default', 'points_syncdir.dat' using 1:8 with linespoints lw 2 lc 2 dt 2 title 'SSD, max_batch_time=0', 'points_syncdir.dat' using 1:10 with linespoints lw 2 lc 3 dt 1 title 'disk, max_batch_time default', 'points_syncdir.dat' using 1:12 with linespoints lw 2 lc 3 dt 2 title 'disk, max_batch_time=0', 'points_syncdir.dat' using 1:14 with linespoints lw 2 lc 1 dt 3 title 'xfs, log on NVRAM', 'points_syncdir.dat' using 1:16 with linespoints lw 2 lc 2 dt 3 title 'xfs, log on SSD', 'points_syncdir.dat' using 1:18 with linespoints lw 2 lc 3 dt 3 title 'xfs, log on disk'
