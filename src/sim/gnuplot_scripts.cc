#include "sim/gnuplot_scripts.h"

namespace zeus::sim {
namespace {

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string preamble(const std::string& stem, const std::string& title) {
  return "set terminal svg size 900,480 dynamic enhanced font 'sans,11' background rgb 'white'\n"
         "set output " + quote(stem + ".svg") + "\n"
         "set datafile separator ','\n"
         "set datafile columnheaders\n"
         "set title " + quote(title) + "\n"
         "set grid ytics lc rgb '#dddddd'\n"
         "set border 3\nset tics nomirror\n"
         "set linetype 1 lc rgb '#7f7f7f'\nset linetype 2 lc rgb '#1f77b4'\n"
         "set linetype 3 lc rgb '#d62728'\nset linetype 4 lc rgb '#2ca02c'\n";
}

}  // namespace

std::string clustered_bars_script(const std::string& stem, const std::string& csv, int num_series,
                                  const std::string& title, const std::string& ylabel) {
  std::string s = preamble(stem, title);
  s += "set style data histograms\nset style histogram clustered gap 1\n"
       "set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
       "set key outside top center horizontal\nset yrange [0:*]\n"
       "set ylabel " + quote(ylabel) + "\n"
       "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444'\n"
       "set xtics rotate by -20\n";
  s += "plot for [i=2:" + std::to_string(num_series + 1) + "] " + quote(csv) +
       " using i:xtic(1) title columnhead(i)\n";
  return s;
}

std::string lines_script(const std::string& stem, const std::string& csv, int num_series, const std::string& title,
                         const std::string& xlabel, const std::string& ylabel, bool logscale_x) {
  std::string s = preamble(stem, title);
  s += "set key top left\nset xlabel " + quote(xlabel) + "\nset ylabel " + quote(ylabel) + "\n";
  if (logscale_x) s += "set logscale x 2\n";
  s += "plot for [i=2:" + std::to_string(num_series + 1) + "] " + quote(csv) +
       " using 1:i with lines lw 2 title columnhead(i)\n";
  return s;
}

std::string pareto_script(const std::string& stem, const std::string& csv, const std::string& frontier_csv,
                          const std::string& title) {
  std::string s = preamble(stem, title);
  s += "set key top right\nset xlabel 'Time to accuracy (s)'\nset ylabel 'Energy to accuracy (J)'\n"
       "set grid xtics lc rgb '#dddddd'\nset logscale xy\n";
  s += "plot " + quote(csv) + " using 3:4 with points pt 7 ps 0.5 lc rgb '#aaaaaa' title 'every (b, p)', \\\n"
       "     " + quote(frontier_csv) + " using 3:4 with linespoints lw 2 pt 7 ps 0.6 lc rgb '#1f77b4' title 'Pareto frontier', \\\n"
       "     " + quote(csv) + " using 3:($8 == 1 ? $4 : 1/0) with points pt 5 ps 1.4 lc rgb '#d62728' title 'b0 at max power', \\\n"
       "     " + quote(csv) + " using 3:($9 == 1 ? $4 : 1/0) with points pt 9 ps 1.6 lc rgb '#2ca02c' title 'optimum (eta)'\n";
  return s;
}

}  // namespace zeus::sim
