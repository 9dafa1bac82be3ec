// load_serving_trace (zeus/serving/sim_serving.h): Azure's LLM inference trace CSV -> requests.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/csv_table.h"
#include "zeus/serving/sim_serving.h"

namespace zeus::sim {
namespace {

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
long long days_from_civil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fffffff]" -> Unix seconds; NaN when malformed.
double parse_timestamp(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0;
  double s = 0;
  char tail = 0;
  const std::string copy(text);
  if (std::sscanf(copy.c_str(), "%d-%d-%d %d:%d:%lf%c", &y, &mo, &d, &h, &mi, &s, &tail) != 6 ||
      mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 ||
      s >= 61) {
    return std::nan("");
  }
  return static_cast<double>(days_from_civil(y, static_cast<unsigned>(mo),
                                             static_cast<unsigned>(d))) * 86400.0 +
         h * 3600.0 + mi * 60.0 + s;
}

}  // namespace

Result<ServingTrace> load_serving_trace(const std::string& path) {
  std::ifstream file(path);
  if (!file) {
    return fail(ErrorCode::kNotFound,
                "cannot read the trace " + path +
                    " (a CSV with TIMESTAMP, ContextTokens and GeneratedTokens columns, e.g. "
                    "data/llm_traces/azure_llm_2023_conv.csv)");
  }
  std::stringstream text;
  text << file.rdbuf();
  Result<CsvTable> parsed = CsvTable::parse(text.str(), path);
  if (!parsed) return fail(parsed.error());
  const CsvTable& table = *parsed;
  Result<std::vector<int>> found =
      table.require_columns({"TIMESTAMP", "ContextTokens", "GeneratedTokens"});
  if (!found) return fail(found.error());
  const std::vector<int>& columns = *found;
  ServingTrace trace;
  trace.name = std::filesystem::path(path).stem().string();
  std::vector<double> unix_s;
  for (size_t row = 0; row < table.num_rows(); ++row) {
    const double t = parse_timestamp(table.cell(row, columns[0]));
    if (std::isnan(t)) {
      return fail(ErrorCode::kInvalidArgument,
                  path + " line " + std::to_string(table.line_of(row)) + ": TIMESTAMP '" +
                      std::string(table.cell(row, columns[0]).substr(0, 40)) +
                      "' is not YYYY-MM-DD HH:MM:SS[.fraction]");
    }
    Result<double> prompt_cell = table.number(row, columns[1], "ContextTokens");
    if (!prompt_cell) return fail(prompt_cell.error());
    Result<double> output_cell = table.number(row, columns[2], "GeneratedTokens");
    if (!output_cell) return fail(output_cell.error());
    const double prompt = *prompt_cell, output = *output_cell;
    if (prompt < 0 || output < 0 || prompt > 1e7 || output > 1e7 || prompt != std::floor(prompt) ||
        output != std::floor(output)) {
      return fail(ErrorCode::kInvalidArgument,
                  path + " line " + std::to_string(table.line_of(row)) +
                      ": token counts must be whole numbers from 0 to 10,000,000 (ContextTokens " +
                      std::string(table.cell(row, columns[1]).substr(0, 40)) +
                      ", GeneratedTokens " +
                      std::string(table.cell(row, columns[2]).substr(0, 40)) + ")");
    }
    unix_s.push_back(t);
    // A request that generated nothing still returns one (empty) answer: one output token.
    trace.requests.push_back({0, static_cast<int>(prompt), std::max(1, static_cast<int>(output))});
  }
  if (trace.requests.empty()) {
    return fail(ErrorCode::kInvalidArgument, path + " holds no request");
  }
  std::vector<size_t> order(unix_s.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return unix_s[a] < unix_s[b]; });
  std::vector<ServingRequest> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) {
    ServingRequest r = trace.requests[i];
    r.arrival_s = unix_s[i] - unix_s[order.front()];
    sorted.push_back(r);
  }
  trace.requests = std::move(sorted);
  return trace;
}

}  // namespace zeus::sim
