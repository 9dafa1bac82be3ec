#include "common/csv_table.h"

#include <charconv>
#include <cmath>

namespace zeus {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = line.find(',', start);
    cells.emplace_back(trim(line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

}  // namespace

Result<CsvTable> CsvTable::parse(std::string_view text, std::string_view source) {
  CsvTable table;
  table.source_ = std::string(source);
  // A UTF-8 byte-order mark (Excel's "CSV UTF-8") is not part of the first column's name.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  std::size_t pos = 0;
  std::size_t line_no = 0;
  bool have_header = false;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line);
    if (!have_header) {
      table.header_ = std::move(cells);
      have_header = true;
      continue;
    }
    if (cells.size() != table.header_.size()) {
      return fail(ErrorCode::kInvalidArgument,
                  table.source_ + " line " + std::to_string(line_no) + ": " +
                      std::to_string(cells.size()) + " cells but the header has " +
                      std::to_string(table.header_.size()) + " (fix or remove the row)");
    }
    table.rows_.push_back(std::move(cells));
    table.lines_.push_back(line_no);
  }
  if (!have_header) {
    return fail(ErrorCode::kInvalidArgument,
                table.source_ + ": empty file (expected a CSV header row)");
  }
  return table;
}

Result<std::vector<int>> CsvTable::require_columns(const std::vector<std::string>& names) const {
  std::vector<int> indices;
  std::string missing;
  for (const std::string& name : names) {
    int found = -1;
    for (std::size_t i = 0; i < header_.size(); ++i) {
      if (header_[i] == name) found = static_cast<int>(i);
    }
    if (found < 0) missing += (missing.empty() ? "" : ", ") + name;
    indices.push_back(found);
  }
  if (!missing.empty()) {
    return fail(ErrorCode::kInvalidArgument,
                source_ + ": missing column(s) " + missing + " (the header row must name them)");
  }
  return indices;
}

Result<double> CsvTable::number(std::size_t row, int column, std::string_view column_name) const {
  std::string_view text = cell(row, column);
  double value = 0.0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (!text.empty() && *begin == '+') ++begin;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return fail(ErrorCode::kInvalidArgument, source_ + " line " + std::to_string(line_of(row)) +
                                                 ": column " + std::string(column_name) + ": '" +
                                                 std::string(text) + "' is not a number");
  }
  return value;
}

}  // namespace zeus
