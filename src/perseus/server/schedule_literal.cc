// Schedule files, parsed and never evaluated (perseus/server/schedule_literal.h).
#include "perseus/server/schedule_literal.h"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace zeus::pfo {
namespace {

constexpr int kMaxDepth = 16;                     // [[(...)]] needs 3
constexpr size_t kMaxFileBytes = size_t{256} << 20;

// A parsed literal: a list or tuple of items, a string or an integer, and where it starts.
struct Literal {
  enum class Kind { kSequence, kString, kInteger } kind = Kind::kSequence;
  std::string text;
  long long number = 0;
  std::vector<Literal> items;
  int line = 1;
  int column = 1;
};

std::string place(int line, int column) {
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

class LiteralParser {
 public:
  explicit LiteralParser(std::string_view text) : s_(text) {}

  Result<Literal> parse_document() {
    skip_blank();
    if (at_end()) return error("the file holds no schedule (expected '[')");
    Result<Literal> value = parse_value(0);
    if (!value) return value;
    skip_blank();
    if (!at_end()) return error("unexpected " + describe() + " after the schedule's closing bracket");
    return value;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }
  char peek(size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }
  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++i_;
  }
  // Whitespace (line breaks included: they are inside brackets) and # comments.
  void skip_blank() {
    while (!at_end()) {
      if (peek() == '#') {
        while (!at_end() && peek() != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(peek()))) {
        advance();
      } else {
        break;
      }
    }
  }
  std::string describe() const {
    if (at_end()) return "end of file";
    const unsigned char c = static_cast<unsigned char>(peek());
    if (std::isprint(c)) return "'" + std::string(1, peek()) + "'";
    return "byte 0x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
  }
  tl::unexpected<Error> error(const std::string& why) const {
    return fail(ErrorCode::kInvalidArgument, place(line_, column_) + ": " + why);
  }

  Result<Literal> parse_value(int depth) {
    skip_blank();
    if (depth > kMaxDepth) return error("brackets nested deeper than " + std::to_string(kMaxDepth));
    const char c = peek();
    if (c == '[' || c == '(') return parse_sequence(depth);
    if (c == '\'' || c == '"') return parse_string();
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+') return parse_integer();
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = i_;
      size_t end = i_;
      while (end < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[end])) || s_[end] == '_'))
        ++end;
      return error("a name ('" + std::string(s_.substr(start, std::min<size_t>(end - start, 40))) +
                   "') is not allowed: a schedule holds only lists, tuples, quoted strings and "
                   "integers; it is parsed, never run");
    }
    if (c == '{') return error("a dict or set is not allowed in a .py schedule");
    if (at_end()) return error("the schedule ends early (an unclosed bracket?)");
    return error("unexpected " + describe() +
                 ": a schedule holds only lists, tuples, quoted strings and integers");
  }

  // [a, b, ...] or (a, b, ...); "(a)" without a comma is a, as in Python.
  Result<Literal> parse_sequence(int depth) {
    Literal seq;
    seq.line = line_;
    seq.column = column_;
    const char close = peek() == '[' ? ']' : ')';
    const bool tuple = close == ')';
    advance();
    bool comma_seen = false;
    while (true) {
      skip_blank();
      if (peek() == close) {
        advance();
        if (tuple && seq.items.size() == 1 && !comma_seen) return std::move(seq.items.front());
        return seq;
      }
      Result<Literal> item = parse_value(depth + 1);
      if (!item) return item;
      seq.items.push_back(std::move(*item));
      skip_blank();
      if (peek() == ',') {
        comma_seen = true;
        advance();
        continue;
      }
      if (at_end()) return error("the schedule ends early (an unclosed bracket?)");
      if (peek() != close) {
        return error("expected ',' or '" + std::string(1, close) + "', found " + describe());
      }
    }
  }

  Result<Literal> parse_string() {
    Literal str;
    str.kind = Literal::Kind::kString;
    str.line = line_;
    str.column = column_;
    const char quote = peek();
    if (peek(1) == quote && peek(2) == quote) return error("triple-quoted strings are not allowed");
    advance();
    while (true) {
      if (at_end() || peek() == '\n') return error("the string is not closed on its line");
      const char c = peek();
      if (c == quote) {
        advance();
        return str;
      }
      if (c == '\\') {
        advance();
        const char e = peek();
        const std::string_view simple = "\\'\"";
        if (e == 'n' || e == 't') {
          str.text += e == 'n' ? '\n' : '\t';
        } else if (!at_end() && simple.find(e) != std::string_view::npos) {
          str.text += e;
        } else {
          return error("only the escapes \\\\, \\', \\\", \\n and \\t are allowed in a string");
        }
        advance();
        continue;
      }
      str.text += c;
      advance();
    }
  }

  Result<Literal> parse_integer() {
    Literal num;
    num.kind = Literal::Kind::kInteger;
    num.line = line_;
    num.column = column_;
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      advance();
    }
    if (!std::isdigit(static_cast<unsigned char>(peek()))) {
      return error("an operator is not allowed: a schedule holds only literals");
    }
    long long value = 0;
    while (std::isdigit(static_cast<unsigned char>(peek())) ||
           (peek() == '_' && std::isdigit(static_cast<unsigned char>(peek(1))))) {
      if (peek() != '_') {
        value = value * 10 + (peek() - '0');
        if (value > INT_MAX) return error("the number is too large for a clock in MHz");
      }
      advance();
    }
    const char next = peek();
    if (next == '.' || std::isalpha(static_cast<unsigned char>(next)) || next == '_') {
      return error("only whole numbers are allowed (a clock in MHz)");
    }
    num.number = negative ? -value : value;
    return num;
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
  int column_ = 1;
};

bool is_sequence(const Literal& l) { return l.kind == Literal::Kind::kSequence; }

// The parsed literal as schedules: a sequence of ranks, each a sequence of (name, MHz) pairs.
Result<RankSchedules> to_schedules(const Literal& top) {
  auto bad = [](const Literal& at, const std::string& why) {
    return fail(ErrorCode::kInvalidArgument, place(at.line, at.column) + ": " + why);
  };
  if (!is_sequence(top)) return bad(top, "the schedule must be a list with one list per rank");
  RankSchedules out;
  for (size_t r = 0; r < top.items.size(); ++r) {
    const Literal& rank = top.items[r];
    if (!is_sequence(rank)) {
      return bad(rank, "rank " + std::to_string(r) + "'s schedule must be a list of (name, MHz)");
    }
    auto& entries = out.emplace_back();
    for (const Literal& e : rank.items) {
      if (!is_sequence(e) || e.items.size() != 2 || e.items[0].kind != Literal::Kind::kString ||
          e.items[1].kind != Literal::Kind::kInteger) {
        return bad(e, "rank " + std::to_string(r) +
                          ": an entry must be an (instruction name, MHz) pair such as "
                          "('forward', 1980)");
      }
      if (e.items[1].number < 0) return bad(e.items[1], "a clock cannot be negative");
      entries.emplace_back(e.items[0].text, static_cast<int>(e.items[1].number));
    }
  }
  return out;
}

// [[name, MHz], ...] of one rank or stage, from JSON.
Result<std::vector<std::pair<std::string, int>>> json_entries(const nlohmann::json& list,
                                                              const std::string& where) {
  auto bad = [&](const std::string& why) {
    return fail(ErrorCode::kInvalidArgument, where + ": " + why);
  };
  if (!list.is_array()) return bad("must be a list of [instruction name, MHz] pairs");
  std::vector<std::pair<std::string, int>> out;
  for (size_t k = 0; k < list.size(); ++k) {
    const nlohmann::json& e = list[k];
    if (!e.is_array() || e.size() != 2 || !e[0].is_string() || !e[1].is_number_integer() ||
        e[1].get<long long>() < 0 || e[1].get<long long>() > INT_MAX) {
      return bad("entry " + std::to_string(k) +
                 " must be [instruction name, MHz >= 0], such as [\"forward\", 1980]");
    }
    out.emplace_back(e[0].get<std::string>(), e[1].get<int>());
  }
  return out;
}

}  // namespace

Result<RankSchedules> parse_schedule_literal(std::string_view text) {
  Result<Literal> top = LiteralParser(text).parse_document();
  if (!top) return fail(top.error());
  return to_schedules(*top);
}

Result<RankSchedules> parse_schedule_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return fail(ErrorCode::kInvalidArgument, "not valid JSON");
  const nlohmann::json* per_rank = &j;
  if (j.is_object()) {  // zeus pfo choose
    if (!j.contains("frequencies")) {
      return fail(ErrorCode::kInvalidArgument,
                  "a JSON object schedule needs \"frequencies\" (the file `zeus pfo choose` "
                  "writes)");
    }
    per_rank = &j["frequencies"];
  }
  if (!per_rank->is_array()) {
    return fail(ErrorCode::kInvalidArgument, "the schedule must be a list with one entry per rank");
  }
  RankSchedules out;
  for (size_t r = 0; r < per_rank->size(); ++r) {
    const nlohmann::json& item = (*per_rank)[r];
    const std::string where = "rank " + std::to_string(r);
    if (item.is_object()) {  // a dumped N.sched.json: {"rank": r, "frequencies": [...]}
      const auto rank = item.find("rank");
      if (!item.contains("frequencies") || rank == item.end() || !rank->is_number_integer() ||
          rank->get<long long>() != static_cast<long long>(r)) {
        return fail(ErrorCode::kInvalidArgument,
                    where + ": expected {\"rank\": " + std::to_string(r) +
                        ", \"frequencies\": [...]} (ranks in order)");
      }
      Result<std::vector<std::pair<std::string, int>>> e = json_entries(item["frequencies"], where);
      if (!e) return fail(e.error());
      out.push_back(std::move(*e));
      continue;
    }
    Result<std::vector<std::pair<std::string, int>>> e = json_entries(item, where);
    if (!e) return fail(e.error());
    out.push_back(std::move(*e));
  }
  return out;
}

Result<RankSchedules> read_schedule_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return fail(ErrorCode::kNotFound, "schedule file not found: " + path);
  }
  if (std::filesystem::file_size(path, ec) > kMaxFileBytes) {
    return fail(ErrorCode::kInvalidArgument, "schedule file " + path + " is larger than 256 MiB");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) return fail(ErrorCode::kNotFound, "cannot read schedule file " + path);
  const bool python = std::filesystem::path(path).extension() == ".py";
  Result<RankSchedules> s =
      python ? parse_schedule_literal(text.str()) : parse_schedule_json(text.str());
  if (!s) return fail(s.error().code, "schedule file " + path + ": " + s.error().message);
  return s;
}

}  // namespace zeus::pfo
