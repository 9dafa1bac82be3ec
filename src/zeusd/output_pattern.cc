#include "zeusd/output_pattern.h"

#include <re2/re2.h>

namespace zeus::zeusd {

Result<OutputPattern> OutputPattern::compile(const std::string& text) {
  RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const RE2>(text, options);
  if (!re->ok()) return fail(ErrorCode::kInvalidArgument, re->error());
  OutputPattern out;
  out.re_ = std::move(re);
  out.text_ = text;
  return out;
}

bool OutputPattern::matches(std::string_view output) const {
  return RE2::PartialMatch(re2::StringPiece(output.data(), output.size()), *re_);
}

}  // namespace zeus::zeusd
