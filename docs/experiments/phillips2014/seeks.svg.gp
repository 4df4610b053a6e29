set terminal svg noenhanced size 960,600 dynamic font 'sans,11'
set output 'seeks.svg'
set title 'seeks per 100 files'
set ylabel 'seeks'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top left
set grid ytics
set yrange [0:*]
plot 'phases.dat' using 3:xtic(1) title 'ext4', '' using 5 title 'xfs', '' using 7 title 'btrfs'
