#include "zeus/monitor/energy_charge.h"

#include <cmath>
#include <string>
#include <vector>

namespace zeus {

Result<AccountedMeasurement> charge_constant_power(IntensityProvider& provider, double start_s,
                                                   double duration_s, double energy_j) {
  if (!std::isfinite(start_s) || !std::isfinite(duration_s) || !std::isfinite(energy_j) ||
      duration_s < 0 || energy_j < 0) {
    return fail(ErrorCode::kInvalidArgument,
                "a charged span needs a finite start and a duration and energy >= 0 (got start " +
                    std::to_string(start_s) + " s, " + std::to_string(duration_s) + " s, " +
                    std::to_string(energy_j) + " J)");
  }
  const double end_s = start_s + duration_s;
  std::vector<AccountedPart> parts;
  std::vector<Result<double>> values;
  double at = start_s;
  do {
    const double next = provider.next_boundary_after(at);
    const double part_end = next > at && next < end_s ? next : end_s;
    AccountedPart part;
    part.start_s = at;
    part.end_s = part_end;
    part.energy.time_s = part_end - at;
    part.energy.gpu_energy_j[0] =
        duration_s > 0 ? energy_j * (part_end - at) / duration_s : energy_j;
    values.push_back(provider.value_at(at));
    parts.push_back(std::move(part));
    at = part_end;
  } while (at < end_s && values.back());  // a part without a value already makes it unknown
  Measurement whole;
  whole.time_s = duration_s;
  whole.gpu_energy_j[0] = energy_j;
  return account_window(whole, std::move(parts), values, provider.unit());
}

}  // namespace zeus
