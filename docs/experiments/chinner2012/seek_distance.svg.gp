set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'seek_distance.svg'
set title 'seeks while writing, by distance, 64 threads'
set xlabel 'distance up to (cylinders)'
set ylabel 'seeks'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top right
set xtics rotate by -45 font ',8'
set grid ytics
set yrange [0:*]
plot 'seek_distance.dat' using 2:xtic(1) title 'ext4', '' using 3 title 'xfs'
