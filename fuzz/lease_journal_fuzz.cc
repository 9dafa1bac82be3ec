// libFuzzer target: zeusd's lease journal decoder (zeusd/lease_journal.h), which a restarted
// zeusd runs as root on whatever the file holds. Any bytes give leases plus rejected entries, or
// an error naming what is wrong, never a crash. Invariants checked on each input:
//   - every entry of "leases" is either decoded or rejected with a reason, never both, never lost;
//   - the decoded leases name each GPU (index, and UUID when given) once;
//   - what is decoded survives encode_journal and decode_journal unchanged, with nothing rejected.
// The strict JSON object reader of request bodies (common/strict_json.h) gets the same bytes.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/strict_json.h"
#include "zeusd/lease_journal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)zeus::parse_strict_json_object(text);
  const auto decoded = zeus::zeusd::decode_journal(text);
  if (!decoded) {
    if (decoded.error().message.empty()) __builtin_trap();
    return 0;
  }
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded() || !document.contains("leases")) __builtin_trap();
  if (decoded->leases.size() + decoded->rejected.size() != document["leases"].size())
    __builtin_trap();
  for (const std::string& reason : decoded->rejected) {
    if (reason.rfind("lease ", 0) != 0) __builtin_trap();
  }
  std::set<int> indices;
  std::set<std::string> uuids;
  for (const auto& lease : decoded->leases) {
    if (!indices.insert(lease.gpu).second) __builtin_trap();
    if (!lease.gpu_uuid.empty() && !uuids.insert(lease.gpu_uuid).second) __builtin_trap();
    if (lease.pid <= 0 || lease.gpu < 0) __builtin_trap();
  }
  const auto again =
      zeus::zeusd::decode_journal(zeus::zeusd::encode_journal(decoded->leases, decoded->boot_id));
  if (!again || !again->rejected.empty() || again->leases != decoded->leases ||
      again->boot_id != decoded->boot_id) {
    __builtin_trap();
  }
  return 0;
}
