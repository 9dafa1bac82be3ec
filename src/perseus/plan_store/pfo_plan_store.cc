// The compact plan store (zeus/perseus/pfo_plan_store.h). Layout, all little-endian
// (docs/perseus.md):
//   header   "ZPFOPLN1", u32 version 1, u32 stages, u32 microbatches, u32 checkpoint interval K,
//            u64 plans, u32 global clocks, f64 unit, f64 P2P power;
//            per stage u32 instructions then one byte per instruction (0 forward, 1 backward)
//   tables   T_max: f64 time, f64 energy, i64 quant time, u16 MHz per instruction;
//            per plan i64 quant time, f64 time, f64 energy;
//            per global clock u32 MHz, f64 time, f64 energy;
//            per checkpoint u64 offset; per plan u64 offset of its change record, and the end
//   clocks   per checkpoint (plans 0, K, 2K, ...) u16 MHz per instruction;
//            per plan a change record from the plan before (plan 0: from T_max): u32 count,
//            then count x (u32 instruction, u16 MHz); instructions are stage-major.
#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>

#include "common/atomic_file.h"
#include "zeus/perseus/pfo_plan_store.h"

namespace zeus::pfo {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the plan store is written as the host's little-endian bytes");

constexpr char kMagic[8] = {'Z', 'P', 'F', 'O', 'P', 'L', 'N', '1'};
constexpr uint32_t kVersion = 1;
constexpr std::size_t kChangeBytes = 6;  // u32 instruction + u16 MHz

class Writer {
 public:
  template <typename T>
  void put(T value) {
    const std::size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &value, sizeof(T));
  }
  std::vector<char> bytes;
};

Error damaged_file(const std::filesystem::path& path) {
  return Error{ErrorCode::kInvalidArgument,
               path.string() + " is cut short or damaged (plan again with `zeus pfo plan`)"};
}

// Reads fixed-width values from bytes in memory.
class SpanReader {
 public:
  SpanReader(std::span<const char> bytes, const std::filesystem::path& path)
      : bytes_(bytes), path_(path) {}
  template <typename T>
  Result<void> read(T& value) {
    if (at_ + sizeof(T) > bytes_.size()) return fail(damaged());
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return ok();
  }
  Error damaged() const { return damaged_file(path_); }

 private:
  std::span<const char> bytes_;
  const std::filesystem::path& path_;
  std::size_t at_ = 0;
};

std::vector<int> flatten(const std::vector<std::vector<int>>& clocks) {
  std::vector<int> flat;
  for (const auto& stage : clocks) flat.insert(flat.end(), stage.begin(), stage.end());
  return flat;
}

}  // namespace

Result<void> write_plan_store(const std::filesystem::path& path, const Frontier& frontier,
                              std::span<const GlobalClockPlan> global_clocks,
                              uint32_t checkpoint_interval) {
  if (checkpoint_interval < 1) {
    return fail(ErrorCode::kInvalidArgument, "the plan store's checkpoint interval must be >= 1");
  }
  const auto& points = frontier.points();
  const std::vector<int> slowest = flatten(frontier.all_slowest_clocks_mhz());
  for (int mhz : slowest) {
    if (mhz < 0 || mhz > 65535) {
      return fail(ErrorCode::kInvalidArgument,
                  "a clock of " + std::to_string(mhz) + " MHz does not fit the plan store");
    }
  }
  // The clocks: checkpoints and change records, laid out after the tables.
  std::vector<std::vector<char>> checkpoints;
  std::vector<std::vector<char>> records(points.size());
  std::vector<int> previous = slowest;
  frontier.for_each_plan([&](std::size_t i, const std::vector<std::vector<int>>& clocks) {
    const std::vector<int> flat = flatten(clocks);
    Writer record;
    uint32_t count = 0;
    record.put<uint32_t>(0);
    for (std::size_t k = 0; k < flat.size(); ++k) {
      if (flat[k] == previous[k]) continue;
      record.put<uint32_t>(static_cast<uint32_t>(k));
      record.put<uint16_t>(static_cast<uint16_t>(flat[k]));
      ++count;
    }
    std::memcpy(record.bytes.data(), &count, sizeof(count));
    records[i] = std::move(record.bytes);
    if (i % checkpoint_interval == 0) {
      Writer whole;
      for (int mhz : flat) whole.put<uint16_t>(static_cast<uint16_t>(mhz));
      checkpoints.push_back(std::move(whole.bytes));
    }
    previous = flat;
  });

  Writer out;
  out.bytes.assign(kMagic, kMagic + sizeof(kMagic));
  out.put<uint32_t>(kVersion);
  out.put<uint32_t>(static_cast<uint32_t>(frontier.schedule().size()));
  out.put<uint32_t>(static_cast<uint32_t>(frontier.options().num_microbatches));
  out.put<uint32_t>(checkpoint_interval);
  out.put<uint64_t>(points.size());
  out.put<uint32_t>(static_cast<uint32_t>(global_clocks.size()));
  out.put<double>(frontier.options().unit_time_s);
  out.put<double>(frontier.options().p2p_power_w);
  for (const auto& stage : frontier.schedule()) {
    out.put<uint32_t>(static_cast<uint32_t>(stage.size()));
    for (const PipelineInstruction& inst : stage)
      out.put<uint8_t>(inst.kind == InstructionKind::kForward ? 0 : 1);
  }
  const FrontierPoint& t_max = frontier.all_slowest();
  out.put<double>(t_max.time_s);
  out.put<double>(t_max.energy_j);
  out.put<int64_t>(t_max.quant_time);
  for (int mhz : slowest) out.put<uint16_t>(static_cast<uint16_t>(mhz));
  for (const FrontierPoint& p : points) {
    out.put<int64_t>(p.quant_time);
    out.put<double>(p.time_s);
    out.put<double>(p.energy_j);
  }
  for (const GlobalClockPlan& g : global_clocks) {
    out.put<uint32_t>(static_cast<uint32_t>(g.clock_mhz));
    out.put<double>(g.time_s);
    out.put<double>(g.energy_j);
  }
  // Offsets: everything after the two offset tables.
  uint64_t at = out.bytes.size() + 8 * checkpoints.size() + 8 * (points.size() + 1);
  for (const auto& c : checkpoints) {
    out.put<uint64_t>(at);
    at += c.size();
  }
  for (const auto& r : records) {
    out.put<uint64_t>(at);
    at += r.size();
  }
  out.put<uint64_t>(at);

  for (const auto& c : checkpoints) out.bytes.insert(out.bytes.end(), c.begin(), c.end());
  for (const auto& r : records) out.bytes.insert(out.bytes.end(), r.begin(), r.end());
  return write_file_atomically(path, std::string_view(out.bytes.data(), out.bytes.size()));
}

Result<PlanStore> PlanStore::open(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::error_code ec;
  const uint64_t size = file ? std::filesystem::file_size(path, ec) : 0;
  if (!file || ec) {
    return fail(ErrorCode::kNotFound,
                "cannot read " + path.string() + " (the plans.bin of `zeus pfo plan --out DIR`)");
  }
  // The whole file (a few MB even for the largest frontiers): reading a plan is then memory work.
  auto bytes = std::make_shared<std::vector<char>>(size);
  file.read(bytes->data(), static_cast<std::streamsize>(size));
  if (!file) {
    return fail(ErrorCode::kNotFound,
                "cannot read " + path.string() + " (the plans.bin of `zeus pfo plan --out DIR`)");
  }
  if (size < sizeof(kMagic) || std::memcmp(bytes->data(), kMagic, sizeof(kMagic)) != 0) {
    return fail(ErrorCode::kInvalidArgument,
                path.string() +
                    " is not a plan store (no ZPFOPLN1 header); plan again with "
                    "`zeus pfo plan`");
  }
  SpanReader in(std::span<const char>(*bytes).subspan(sizeof(kMagic)), path);
  uint32_t version = 0;
  ZEUS_TRY(in.read(version));
  if (version != kVersion) {
    return fail(ErrorCode::kInvalidArgument,
                path.string() + " is plan store version " + std::to_string(version) +
                    "; this zeus reads version 1 (plan again with `zeus pfo plan`)");
  }
  PlanStore store;
  store.path_ = path;
  store.bytes_ = std::move(bytes);
  uint32_t stages = 0, microbatches = 0, clocks = 0;
  uint64_t plans = 0;
  ZEUS_TRY(in.read(stages));
  ZEUS_TRY(in.read(microbatches));
  ZEUS_TRY(in.read(store.checkpoint_interval_));
  ZEUS_TRY(in.read(plans));
  ZEUS_TRY(in.read(clocks));
  ZEUS_TRY(in.read(store.unit_s_));
  ZEUS_TRY(in.read(store.p2p_power_w_));
  store.num_microbatches_ = static_cast<int>(microbatches);
  // Every count is bounded by the file's size, so a damaged header cannot ask for huge tables.
  if (stages == 0 || stages > size || store.checkpoint_interval_ == 0 || plans > size ||
      clocks > size) {
    return fail(in.damaged());
  }
  for (uint32_t s = 0; s < stages; ++s) {
    uint32_t n = 0;
    ZEUS_TRY(in.read(n));
    if (n > size) return fail(in.damaged());
    std::vector<InstructionKind>& kinds = store.kinds_.emplace_back();
    for (uint32_t k = 0; k < n; ++k) {
      uint8_t kind = 0;
      ZEUS_TRY(in.read(kind));
      if (kind > 1) return fail(in.damaged());
      kinds.push_back(kind == 0 ? InstructionKind::kForward : InstructionKind::kBackward);
    }
    store.num_instructions_ += n;
  }
  ZEUS_TRY(in.read(store.all_slowest_.time_s));
  ZEUS_TRY(in.read(store.all_slowest_.energy_j));
  ZEUS_TRY(in.read(store.all_slowest_.quant_time));
  for (const auto& kinds : store.kinds_) {
    std::vector<int>& stage = store.all_slowest_clocks_.emplace_back();
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      uint16_t mhz = 0;
      ZEUS_TRY(in.read(mhz));
      stage.push_back(mhz);
    }
  }
  store.points_.resize(plans);
  for (FrontierPoint& p : store.points_) {
    ZEUS_TRY(in.read(p.quant_time));
    ZEUS_TRY(in.read(p.time_s));
    ZEUS_TRY(in.read(p.energy_j));
  }
  store.global_clocks_.resize(clocks);
  for (GlobalClockPlan& g : store.global_clocks_) {
    uint32_t mhz = 0;
    ZEUS_TRY(in.read(mhz));
    g.clock_mhz = static_cast<int>(mhz);
    ZEUS_TRY(in.read(g.time_s));
    ZEUS_TRY(in.read(g.energy_j));
  }
  store.checkpoint_offsets_.resize((plans + store.checkpoint_interval_ - 1) /
                                   store.checkpoint_interval_);
  for (uint64_t& o : store.checkpoint_offsets_) ZEUS_TRY(in.read(o));
  store.change_offsets_.resize(plans + 1);
  for (uint64_t& o : store.change_offsets_) ZEUS_TRY(in.read(o));
  // Offsets must lie in the file and records must not overlap.
  const uint64_t checkpoint_bytes = 2 * store.num_instructions_;
  for (uint64_t o : store.checkpoint_offsets_) {
    if (o > size || checkpoint_bytes > size - o) return fail(in.damaged());
  }
  for (std::size_t i = 0; i + 1 < store.change_offsets_.size(); ++i) {
    if (store.change_offsets_[i] > store.change_offsets_[i + 1]) return fail(in.damaged());
  }
  if (store.change_offsets_.back() != size) return fail(in.damaged());
  return store;
}

std::span<const char> PlanStore::range(uint64_t begin, uint64_t end) const {
  return std::span<const char>(*bytes_).subspan(begin, end - begin);  // checked by open()
}

Result<void> PlanStore::apply_changes(std::span<const char> bytes, std::size_t records,
                                      std::vector<int>& flat) const {
  SpanReader in(bytes, path_);
  for (std::size_t r = 0; r < records; ++r) {
    uint32_t count = 0;
    ZEUS_TRY(in.read(count));
    for (uint32_t c = 0; c < count; ++c) {
      uint32_t instruction = 0;
      uint16_t mhz = 0;
      ZEUS_TRY(in.read(instruction));
      ZEUS_TRY(in.read(mhz));
      if (instruction >= flat.size()) return fail(in.damaged());
      flat[instruction] = mhz;
    }
  }
  return ok();
}

std::vector<std::vector<int>> PlanStore::unflatten(const std::vector<int>& flat) const {
  std::vector<std::vector<int>> clocks;
  std::size_t at = 0;
  for (const auto& kinds : kinds_) {
    clocks.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(at),
                        flat.begin() + static_cast<std::ptrdiff_t>(at + kinds.size()));
    at += kinds.size();
  }
  return clocks;
}

Result<std::vector<std::vector<int>>> PlanStore::clocks_mhz(std::size_t index) const {
  if (index >= points_.size()) {
    return fail(ErrorCode::kInvalidArgument,
                "plan " + std::to_string(index) + " is not in " + path_.string() + " (plans 0 to " +
                    std::to_string(static_cast<long long>(points_.size()) - 1) + ")");
  }
  const std::size_t checkpoint = index / checkpoint_interval_;
  const uint64_t at = checkpoint_offsets_[checkpoint];
  const std::span<const char> whole = range(at, at + 2 * num_instructions_);
  std::vector<int> flat(num_instructions_);
  for (std::size_t k = 0; k < num_instructions_; ++k) {
    uint16_t mhz = 0;
    std::memcpy(&mhz, whole.data() + 2 * k, sizeof(mhz));
    flat[k] = mhz;
  }
  const std::size_t first = checkpoint * checkpoint_interval_ + 1;  // records after it
  if (first <= index) {
    ZEUS_TRY(apply_changes(range(change_offsets_[first], change_offsets_[index + 1]),
                           index + 1 - first, flat));
  }
  return unflatten(flat);
}

Result<void> PlanStore::for_each_plan(
    const std::function<void(std::size_t, const std::vector<std::vector<int>>&)>& fn) const {
  if (points_.empty()) return ok();
  std::vector<int> flat = flatten(all_slowest_clocks_);
  std::span<const char> rest = range(change_offsets_.front(), change_offsets_.back());
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const std::size_t length = change_offsets_[i + 1] - change_offsets_[i];
    ZEUS_TRY(apply_changes(rest.subspan(0, length), 1, flat));
    rest = rest.subspan(length);
    fn(i, unflatten(flat));
  }
  return ok();
}

}  // namespace zeus::pfo
