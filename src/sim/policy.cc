#include "sim/policy.h"

namespace zeus::sim {

Result<std::unique_ptr<Policy>> make_policy(PolicyKind kind, const WorkloadTrace& trace, const SimOptions& options) {
  switch (kind) {
    case PolicyKind::kDefault: return make_default_policy(trace);
    case PolicyKind::kOracle: return make_oracle_policy(trace, options, /*all_paths=*/true);
    case PolicyKind::kOracleExpected: return make_oracle_policy(trace, options, /*all_paths=*/false);
    case PolicyKind::kGridSearch: return make_grid_search_policy(trace, options);
    case PolicyKind::kZeus: return make_zeus_policy(trace, options);
  }
  return fail(ErrorCode::kInvalidArgument, "unknown policy");
}

}  // namespace zeus::sim
