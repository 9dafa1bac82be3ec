// A minimal CSV table reader for the bundled traces and stage profiles: a header row,
// comma-separated cells, no quoting. Cells are looked up by column name so that column order does
// not matter.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zeus/common/result.h"

namespace zeus {

class CsvTable {
 public:
  // Splits `text` into rows; kInvalidArgument on an empty file or a row whose cell count differs
  // from the header's. `source` names the file in messages.
  static Result<CsvTable> parse(std::string_view text, std::string_view source);

  // Index of each named column; kInvalidArgument listing every missing column.
  Result<std::vector<int>> require_columns(const std::vector<std::string>& names) const;

  std::size_t num_rows() const { return rows_.size(); }
  std::string_view cell(std::size_t row, int column) const {
    return rows_[row][static_cast<std::size_t>(column)];
  }
  // 1-based line number of a data row in the file (for messages).
  std::size_t line_of(std::size_t row) const { return lines_[row]; }
  const std::string& source() const { return source_; }

  // The cell as a finite double; kInvalidArgument naming file, line and column otherwise.
  Result<double> number(std::size_t row, int column, std::string_view column_name) const;

 private:
  std::string source_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> lines_;
};

}  // namespace zeus
