// The wire codec of the Perseus runtime (perseus/wire/wire.h).
#include "perseus/wire/wire.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "common/strict_json.h"

namespace zeus::pfo {
namespace {

using nlohmann::json;

tl::unexpected<WireError> wrong(std::vector<std::string> loc, std::string msg,
                                std::string type = "value_error") {
  return tl::unexpected(WireError{std::move(loc), std::move(msg), std::move(type)});
}

// Parses a JSON text, refusing duplicate keys in any object (nlohmann keeps the last silently).
Decoded<json> parse_strict(std::string_view body) {
  json value;
  const std::optional<std::string> duplicate = parse_json_noting_duplicates(body, value);
  if (value.is_discarded()) {
    return wrong({"body"}, "the body is not valid JSON", "value_error.jsondecode");
  }
  if (duplicate) {
    return wrong({"body", *duplicate}, "the key appears more than once in an object",
                 "value_error.duplicate");
  }
  return value;
}

Decoded<void> list_check(const json& v, const std::vector<std::string>& loc) {
  if (!v.is_array()) return wrong(loc, "value is not a valid list", "type_error.list");
  if (v.size() > kMaxListLength) {
    return wrong(loc, "the list has " + std::to_string(v.size()) + " entries; the limit is " +
                          std::to_string(kMaxListLength));
  }
  return {};
}

// The fields of one message object: presence, types and ranges, with the location of any fault.
class Fields {
 public:
  Fields(const json& object, std::vector<std::string> loc) : j_(object), loc_(std::move(loc)) {}

  Decoded<void> only(std::initializer_list<const char*> names) const {
    if (!j_.is_object()) return wrong(loc_, "value is not a valid dict", "type_error.dict");
    for (const auto& item : j_.items()) {
      bool known = false;
      for (const char* n : names) known = known || item.key() == n;
      if (!known) {
        std::string list;
        for (const char* n : names) list += std::string(list.empty() ? "" : ", ") + n;
        return wrong(at(item.key()), "extra fields not permitted (the fields are: " + list + ")",
                     "value_error.extra");
      }
    }
    return {};
  }
  bool has(const char* name) const { return j_.contains(name); }

  Decoded<int> integer(const char* name, int64_t min, int64_t max = INT32_MAX) const {
    if (!has(name)) return wrong(at(name), "field required", "value_error.missing");
    return integer_value(j_.at(name), at(name), min, max);
  }
  Decoded<std::string> text(const char* name) const {
    if (!has(name)) return wrong(at(name), "field required", "value_error.missing");
    if (!j_.at(name).is_string()) return wrong(at(name), "str type expected", "type_error.str");
    return j_.at(name).get<std::string>();
  }
  Decoded<std::vector<double>> numbers(const char* name) const {
    if (!has(name)) return wrong(at(name), "field required", "value_error.missing");
    return number_list(j_.at(name), at(name));
  }
  Decoded<std::vector<int>> integers(const char* name, int64_t min) const {
    if (!has(name)) return wrong(at(name), "field required", "value_error.missing");
    const json& v = j_.at(name);
    if (Decoded<void> l = list_check(v, at(name)); !l) return tl::unexpected(l.error());
    std::vector<int> out;
    for (size_t i = 0; i < v.size(); ++i) {
      Decoded<int> x = integer_value(v[i], at(name, i), min, INT32_MAX);
      if (!x) return tl::unexpected(x.error());
      out.push_back(*x);
    }
    return out;
  }
  // dict[str, list[list[float]]]; absent: {}.
  Decoded<std::map<std::string, std::vector<std::vector<double>>>> breakdown(
      const char* name) const {
    std::map<std::string, std::vector<std::vector<double>>> out;
    if (!has(name)) return out;
    const json& v = j_.at(name);
    if (!v.is_object()) return wrong(at(name), "value is not a valid dict", "type_error.dict");
    for (const auto& item : v.items()) {
      std::vector<std::string> loc = at(name);
      loc.push_back(item.key());
      if (Decoded<void> l = list_check(item.value(), loc); !l) return tl::unexpected(l.error());
      auto& rows = out[item.key()];
      for (size_t i = 0; i < item.value().size(); ++i) {
        std::vector<std::string> row_loc = loc;
        row_loc.push_back(std::to_string(i));
        Decoded<std::vector<double>> row = number_list(item.value()[i], row_loc);
        if (!row) return tl::unexpected(row.error());
        rows.push_back(std::move(*row));
      }
    }
    return out;
  }
  std::vector<std::string> at(const std::string& name) const {
    std::vector<std::string> loc = loc_;
    loc.push_back(name);
    return loc;
  }
  std::vector<std::string> at(const std::string& name, size_t index) const {
    std::vector<std::string> loc = at(name);
    loc.push_back(std::to_string(index));
    return loc;
  }

  static Decoded<int> integer_value(const json& v, const std::vector<std::string>& loc,
                                    int64_t min, int64_t max) {
    if (!v.is_number_integer()) {
      return wrong(loc, "value is not a valid integer", "type_error.integer");
    }
    const int64_t x = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)
                          ? INT64_MAX
                          : v.get<int64_t>();
    if (x < min) {
      return wrong(loc, "ensure this value is greater than or equal to " + std::to_string(min),
                   "value_error.number.not_ge");
    }
    if (x > max) {
      return wrong(loc, "ensure this value is less than or equal to " + std::to_string(max),
                   "value_error.number.not_le");
    }
    return static_cast<int>(x);
  }

 private:
  static Decoded<std::vector<double>> number_list(const json& v,
                                                  const std::vector<std::string>& loc) {
    if (Decoded<void> l = list_check(v, loc); !l) return tl::unexpected(l.error());
    std::vector<double> out;
    out.reserve(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      std::vector<std::string> item_loc = loc;
      item_loc.push_back(std::to_string(i));
      if (!v[i].is_number()) {
        return wrong(item_loc, "value is not a valid float", "type_error.float");
      }
      const double x = v[i].get<double>();
      if (!std::isfinite(x)) return wrong(item_loc, "must be a finite number");
      out.push_back(x);
    }
    return out;
  }

  const json& j_;
  std::vector<std::string> loc_;
};

// Bad metadata would break the id in URL paths or escape the dump folder.
Decoded<void> check_metadata(const std::string& m, const std::vector<std::string>& loc) {
  if (m.size() > kMaxMetadataBytes) {
    return wrong(loc, "job_metadata is " + std::to_string(m.size()) + " bytes long; the limit is " +
                          std::to_string(kMaxMetadataBytes));
  }
  for (const char c : m) {
    if (c == '/' || c == '\\') {
      return wrong(loc, "job_metadata may not hold '/' or '\\' (it becomes part of the job id, "
                        "which travels in URL paths and names the dump folder)");
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return wrong(loc, "job_metadata may not hold control characters");
    }
    if (c == '?' || c == '#' || c == '%') {
      return wrong(loc, std::string("job_metadata may not hold '") + c +
                            "': it becomes part of the job id, which clients put in URL paths "
                            "as it is (use letters, digits, '-', '_', '.')");
    }
  }
  return {};
}

template <typename T>
tl::unexpected<WireError> pass(const Decoded<T>& d) {
  return tl::unexpected(d.error());
}

json frequencies_json(const FrequencySchedule& s) {
  json list = json::array();
  for (const auto& [name, mhz] : s.frequencies) list.push_back(json::array({name, mhz}));
  return list;
}

json to_json(const RankInfo& r) {
  return {{"rank", r.rank},
          {"dp_rank", r.dp_rank},
          {"pp_rank", r.pp_rank},
          {"tp_rank", r.tp_rank},
          {"available_frequencies", r.available_frequencies}};
}
json to_json(const FrequencySchedule& s) {
  return {{"rank", s.rank}, {"frequencies", frequencies_json(s)}};
}
json to_json(const ProfilingResult& r) {
  return {{"rank", r.rank},
          {"iter_time", r.iter_time},
          {"iter_energy", r.iter_energy},
          {"time_breakdown", r.time_breakdown},
          {"energy_breakdown", r.energy_breakdown}};
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

template <typename T>
std::string dump_list(const std::vector<T>& items) {
  json list = json::array();
  for (const T& item : items) list.push_back(to_json(item));
  return dump(list);
}

}  // namespace

Decoded<JobInfo> decode_job_info(std::string_view body) {
  Decoded<json> j = parse_strict(body);
  if (!j) return pass(j);
  const Fields f(*j, {"body"});
  if (auto k = f.only({"job_id", "pp_degree", "dp_degree", "tp_degree", "world_size",
                       "job_metadata"});
      !k) {
    return pass(k);
  }
  JobInfo job;
  if (f.has("job_id")) {
    Decoded<std::string> id = f.text("job_id");
    if (!id) return pass(id);
    if (!id->empty()) {
      return wrong(f.at("job_id"), "job_id must be empty: the server makes the job id");
    }
  }
  for (auto [name, out] : {std::pair{"pp_degree", &job.pp_degree},
                           std::pair{"dp_degree", &job.dp_degree},
                           std::pair{"tp_degree", &job.tp_degree},
                           std::pair{"world_size", &job.world_size}}) {
    Decoded<int> x = f.integer(name, 1);
    if (!x) return pass(x);
    *out = *x;
  }
  const int64_t product = int64_t{job.pp_degree} * job.dp_degree * job.tp_degree;
  if (product != job.world_size) {
    return wrong(f.at("world_size"),
                 "world_size must equal pp_degree x dp_degree x tp_degree (" +
                     std::to_string(job.pp_degree) + " x " + std::to_string(job.dp_degree) +
                     " x " + std::to_string(job.tp_degree) + " = " + std::to_string(product) +
                     "), not " + std::to_string(job.world_size));
  }
  if (job.world_size > kMaxWorldSize) {
    return wrong(f.at("world_size"), "ensure this value is less than or equal to " +
                                         std::to_string(kMaxWorldSize),
                 "value_error.number.not_le");
  }
  if (f.has("job_metadata") && !(*j)["job_metadata"].is_null()) {
    Decoded<std::string> m = f.text("job_metadata");
    if (!m) return pass(m);
    if (auto ok = check_metadata(*m, f.at("job_metadata")); !ok) return pass(ok);
    if (!m->empty()) job.job_metadata = *m;
  }
  return job;
}

Decoded<RankInfo> decode_rank_info(std::string_view body) {
  Decoded<json> j = parse_strict(body);
  if (!j) return pass(j);
  const Fields f(*j, {"body"});
  if (auto k = f.only({"rank", "dp_rank", "pp_rank", "tp_rank", "available_frequencies"}); !k) {
    return pass(k);
  }
  RankInfo rank;
  for (auto [name, out] : {std::pair{"rank", &rank.rank}, std::pair{"dp_rank", &rank.dp_rank},
                           std::pair{"pp_rank", &rank.pp_rank},
                           std::pair{"tp_rank", &rank.tp_rank}}) {
    Decoded<int> x = f.integer(name, 0);
    if (!x) return pass(x);
    *out = *x;
  }
  Decoded<std::vector<int>> clocks = f.integers("available_frequencies", 0);
  if (!clocks) return pass(clocks);
  // What a rank makes the server keep is bounded in bytes as well as entries: a GPU has at most
  // a few hundred SM clocks (an H100 119, in 15 MHz steps).
  if (clocks->size() > kMaxRankClocks) {
    return wrong({"body", "available_frequencies"},
                 "ensure this value has at most " + std::to_string(kMaxRankClocks) +
                     " items (a GPU has at most a few hundred clocks; this list has " +
                     std::to_string(clocks->size()) + ")",
                 "value_error.list.max_items");
  }
  rank.available_frequencies = std::move(*clocks);
  return rank;
}

Decoded<FrequencySchedule> decode_frequency_schedule(std::string_view body) {
  Decoded<json> j = parse_strict(body);
  if (!j) return pass(j);
  const Fields f(*j, {"body"});
  if (auto k = f.only({"rank", "frequencies"}); !k) return pass(k);
  FrequencySchedule s;
  Decoded<int> rank = f.integer("rank", 0);
  if (!rank) return pass(rank);
  s.rank = *rank;
  if (!f.has("frequencies")) return wrong(f.at("frequencies"), "field required", "value_error.missing");
  const json& list = (*j)["frequencies"];
  if (auto l = list_check(list, f.at("frequencies")); !l) return pass(l);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::vector<std::string> loc = f.at("frequencies", i);
    const json& pair = list[i];
    if (!pair.is_array() || pair.size() != 2) {
      return wrong(loc, "an entry must be [instruction name, MHz]", "type_error.tuple");
    }
    if (!pair[0].is_string()) return wrong(loc, "str type expected", "type_error.str");
    Decoded<int> mhz = Fields::integer_value(pair[1], loc, 0, INT32_MAX);
    if (!mhz) return pass(mhz);
    s.frequencies.emplace_back(pair[0].get<std::string>(), *mhz);
  }
  return s;
}

Decoded<StragglerRequest> decode_straggler_time(std::string_view body) {
  Decoded<json> j = parse_strict(body);
  if (!j) return pass(j);
  const Fields f(*j, {"body"});
  if (auto k = f.only({"iteration_time_s", "pipeline"}); !k) return pass(k);
  if (!f.has("iteration_time_s")) {
    return wrong(f.at("iteration_time_s"), "field required", "value_error.missing");
  }
  const json& v = (*j)["iteration_time_s"];
  if (!v.is_number()) {
    return wrong(f.at("iteration_time_s"), "value is not a valid float", "type_error.float");
  }
  const double t = v.get<double>();
  if (!(t > 0.0) || !std::isfinite(t)) {
    return wrong(f.at("iteration_time_s"),
                 "the straggler's iteration time must be a finite number of seconds > 0");
  }
  StragglerRequest out{t, std::nullopt};
  if (f.has("pipeline")) {
    Decoded<int> p = f.integer("pipeline", 0);
    if (!p) return pass(p);
    out.pipeline = *p;
  }
  return out;
}

Decoded<ProfilingResult> decode_profiling_result(std::string_view body) {
  Decoded<json> j = parse_strict(body);
  if (!j) return pass(j);
  const Fields f(*j, {"body"});
  if (auto k = f.only({"rank", "iter_time", "iter_energy", "time_breakdown", "energy_breakdown"});
      !k) {
    return pass(k);
  }
  ProfilingResult r;
  Decoded<int> rank = f.integer("rank", 0);
  if (!rank) return pass(rank);
  r.rank = *rank;
  Decoded<std::vector<double>> times = f.numbers("iter_time");
  if (!times) return pass(times);
  Decoded<std::vector<double>> energies = f.numbers("iter_energy");
  if (!energies) return pass(energies);
  auto time_breakdown = f.breakdown("time_breakdown");
  if (!time_breakdown) return pass(time_breakdown);
  auto energy_breakdown = f.breakdown("energy_breakdown");
  if (!energy_breakdown) return pass(energy_breakdown);
  r.iter_time = std::move(*times);
  r.iter_energy = std::move(*energies);
  r.time_breakdown = std::move(*time_breakdown);
  r.energy_breakdown = std::move(*energy_breakdown);
  return r;
}

Decoded<int> decode_rank_query(const std::string* value) {
  const std::vector<std::string> loc = {"query", "rank"};
  if (value == nullptr) return wrong(loc, "field required", "value_error.missing");
  const json number = json::parse(*value, nullptr, /*allow_exceptions=*/false);
  return Fields::integer_value(number.is_discarded() ? json() : number, loc, 0, INT32_MAX);
}

std::string encode(const JobInfo& job) {
  return dump({{"job_id", job.job_id},
               {"pp_degree", job.pp_degree},
               {"dp_degree", job.dp_degree},
               {"tp_degree", job.tp_degree},
               {"world_size", job.world_size},
               {"job_metadata", job.job_metadata ? json(*job.job_metadata) : json(nullptr)}});
}
std::string encode(const RankInfo& rank) { return dump(to_json(rank)); }
std::string encode(const FrequencySchedule& schedule) { return dump(to_json(schedule)); }
std::string encode(const ProfilingResult& result) { return dump(to_json(result)); }
std::string encode_list(const std::vector<RankInfo>& ranks) { return dump_list(ranks); }
std::string encode_list(const std::vector<FrequencySchedule>& s) { return dump_list(s); }
std::string encode_list(const std::vector<ProfilingResult>& r) { return dump_list(r); }

std::string validation_error_body(const WireError& error) {
  json loc = json::array();
  for (const std::string& part : error.loc) {
    // FastAPI writes list indices as numbers.
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos &&
                       part.size() < 10 && &part != &error.loc.front();
    loc.push_back(index ? json(std::stoi(part)) : json(part));
  }
  return dump({{"detail", json::array({{{"loc", loc}, {"msg", error.msg}, {"type", error.type}}})}});
}

std::string detail_body(std::string_view detail) { return dump({{"detail", detail}}); }

}  // namespace zeus::pfo
