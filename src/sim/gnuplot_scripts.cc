#include "sim/gnuplot_scripts.h"

#include <cstddef>

namespace zeus::sim {

std::string gnuplot_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string gnuplot_preamble(const std::string& stem, const std::string& title) {
  return "set terminal svg size 900,480 dynamic enhanced font 'sans,11' background rgb 'white'\n"
         "set output " + gnuplot_quote(stem + ".svg") + "\n"
         "set datafile separator ','\n"
         "set datafile columnheaders\n"
         "set title " + gnuplot_quote(title) + "\n"
         "set grid ytics lc rgb '#dddddd'\n"
         "set border 3\nset tics nomirror\n"
         "set linetype 1 lc rgb '#7f7f7f'\nset linetype 2 lc rgb '#1f77b4'\n"
         "set linetype 3 lc rgb '#d62728'\nset linetype 4 lc rgb '#2ca02c'\n"
       // The fifth series (Oracle (expected)) dashed, so an equal fourth stays visible under it.
       "set linetype 5 lc rgb '#e6ab02' dt 2\n";
}

namespace {
std::string quote(const std::string& text) { return gnuplot_quote(text); }
std::string preamble(const std::string& stem, const std::string& title) { return gnuplot_preamble(stem, title); }
}  // namespace

std::string clustered_bars_script(const std::string& stem, const std::string& csv, int num_series,
                                  const std::string& title, const std::string& ylabel,
                                  bool with_errors) {
  std::string s = preamble(stem, title);
  s += std::string("set style data histograms\n") +
       (with_errors ? "set style histogram errorbars gap 1 lw 1\n"
                    : "set style histogram clustered gap 1\n") +
       "set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
       "set key outside bottom center horizontal\nset yrange [0:*]\n"
       "set ylabel " + quote(ylabel) + "\n"
       "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb '#444444'\n"
       // Rotated labels end at their group's tic (not start there, drifting right of it).
       "set xtics rotate by 20 right\n";
  if (with_errors) {  // columns: category, then value and standard deviation per series
    s += "plot for [i=0:" + std::to_string(num_series - 1) + "] " + quote(csv) +
         " using (column(2+2*i)):(column(3+2*i)):xtic(1) title columnhead(2+2*i)\n";
  } else {
    s += "plot for [i=2:" + std::to_string(num_series + 1) + "] " + quote(csv) +
         " using i:xtic(1) title columnhead(i)\n";
  }
  return s;
}

std::string lines_script(const std::string& stem, const std::string& csv, int num_series, const std::string& title,
                         const std::string& xlabel, const std::string& ylabel, bool logscale_x) {
  std::string s = preamble(stem, title);
  // The key beside the plot (never over a line); the x axis ends where the data does.
  s += "set key outside right top\nset autoscale xfix\nset xlabel " + quote(xlabel) +
       "\nset ylabel " + quote(ylabel) + "\n";
  if (logscale_x) s += "set logscale x 2\n";
  s += "plot for [i=2:" + std::to_string(num_series + 1) + "] " + quote(csv) +
       " using 1:i with lines lw 2 title columnhead(i)\n";
  return s;
}

std::string lines_with_bands_script(const std::string& stem, const std::string& csv, int num_series,
                                    const std::string& title, const std::string& xlabel,
                                    const std::string& ylabel) {
  std::string s = preamble(stem, title);
  s += "set key outside right top\nset autoscale xfix\nset xlabel " + quote(xlabel) +
       "\nset ylabel " + quote(ylabel) + "\nset style fill transparent solid 0.15 noborder\n";
  const std::string last = std::to_string(num_series - 1);
  // Bands first (under every line), each in its series' colour; then the lines, titled.
  s += "plot for [i=0:" + last + "] " + quote(csv) +
       " using 1:(column(3+3*i)):(column(4+3*i)) with filledcurves lc i+1 notitle, \\\n"
       "     for [i=0:" + last + "] " + quote(csv) +
       " using 1:(column(2+3*i)) with lines lt i+1 lw 2 title columnhead(2+3*i)\n";
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

std::string tradeoff_script(const std::string& stem, const std::string& csv, const std::string& title) {
  std::string s = preamble(stem, title);
  s += "set key top right\nset xlabel 'Time to accuracy per recurrence (s)'\n"
       "set ylabel 'Energy to accuracy per recurrence (J)'\nset grid xtics lc rgb '#dddddd'\n";
  s += "plot " + quote(csv) + " using 4:5 with linespoints lw 2 pt 6 lc rgb '#2ca02c' title 'Oracle', \\\n"
       "     " + quote(csv) + " using 2:3 with points pt 7 ps 1.2 lc rgb '#d62728' title 'Zeus (last 5)', \\\n"
       "     " + quote(csv) + " using 2:3:(sprintf('%.1f', $1)) with labels offset 1.2,0.6 font ',9' notitle\n";
  return s;
}

std::string heatmap_paths_script(const std::string& stem, const std::string& heat_csv,
                                 const std::vector<std::string>& path_csvs,
                                 const std::vector<std::string>& path_titles,
                                 const std::vector<std::string>& x_labels,
                                 const std::vector<std::string>& y_labels, const std::string& title,
                                 const std::string& cblabel) {
  auto tics = [](const std::vector<std::string>& labels) {
    std::string t = "(";
    for (std::size_t i = 0; i < labels.size(); ++i) t += (i ? ", " : "") + quote(labels[i]) + " " + std::to_string(i);
    return t + ")";
  };
  std::string s = preamble(stem, title);
  s += "set xlabel 'batch size'\nset ylabel 'power limit (W)'\nset cblabel " + quote(cblabel) + "\n"
       "set palette defined (0 '#f7fbff', 1 '#6baed6', 2 '#08306b')\nset key outside bottom center horizontal\n"
       "set xtics " + tics(x_labels) + "\nset ytics " + tics(y_labels) + "\n"
       "set xrange [-0.5:" + std::to_string(x_labels.size()) + "-0.5]\nset yrange [-0.5:" +
       std::to_string(y_labels.size()) + "-0.5]\nunset grid\n";
  s += "plot " + quote(heat_csv) + " using 1:2:3 with image pixels notitle";
  const char* colors[] = {"#ff7f0e", "#d62728", "#9467bd", "#8c564b"};
  for (std::size_t i = 0; i < path_csvs.size(); ++i) {
    const double shift = (static_cast<double>(i) - (static_cast<double>(path_csvs.size()) - 1) / 2.0) * 0.18;
    s += ", \\\n     " + quote(path_csvs[i]) + " using ($2+" + std::to_string(shift) + "):($3+" +
         std::to_string(shift) + ") with linespoints lw 1.5 pt 7 ps 0.7 lc rgb '" + colors[i % 4] + "' title " +
         quote(path_titles[i]);
  }
  return s + "\n";
}

}  // namespace zeus::sim
