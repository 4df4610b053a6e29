set terminal pngcairo noenhanced size 960,600 font 'sans,11'
set output 'device_time.png'
set title 'where the device time went'
set ylabel 'device seconds'
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.7
set key outside top center horizontal
set xtics rotate by -30 font ',8'
set grid ytics
plot 'device_time.dat' using 2:xtic(1) title 'journal writes', '' using 3 title 'journal destage', '' using 4 title 'checkpoint writes', '' using 5 title 'data (ordered and other)', '' using 6 title 'home destage (checkpoint and data)'
