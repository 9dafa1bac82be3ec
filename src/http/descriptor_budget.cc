#include "http/descriptor_budget.h"

#include <algorithm>

namespace zeus::http::detail {

ConnectionBudget connection_budget(size_t descriptor_limit, size_t in_use,
                                   size_t wanted_connections, size_t wanted_privileged_reserve) {
  ConnectionBudget budget;
  budget.reserve = std::max<size_t>(32, descriptor_limit / 16);
  const size_t taken = in_use + budget.reserve;
  const size_t available = descriptor_limit > taken ? descriptor_limit - taken : 0;
  if (wanted_connections + wanted_privileged_reserve <= available) {
    budget.max_connections = wanted_connections;
    budget.privileged_reserve = wanted_privileged_reserve;
    return budget;
  }
  budget.clamped = true;
  const size_t privileged = std::min(wanted_privileged_reserve, available / 4);
  budget.max_connections =
      std::min(wanted_connections, std::max<size_t>(1, available - privileged));
  budget.privileged_reserve = std::min(
      wanted_privileged_reserve, available > budget.max_connections ? available - budget.max_connections : 0);
  return budget;
}

}  // namespace zeus::http::detail
