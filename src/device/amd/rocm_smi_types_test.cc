// Our declarations of rocm_smi's types must match the vendor's. The build never needs the vendor
// header; where it is installed (Debian librocm-smi-dev) this test compares against it.
#include "device/amd/rocm_smi_types.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#if __has_include(<rocm_smi/rocm_smi.h>)
#include <rocm_smi/rocm_smi.h>
#define ZEUS_HAVE_VENDOR_ROCM_SMI 1
#endif

namespace zeus {
namespace {

TEST(RocmSmiTypesTest, FrequenciesLayoutIsTheCLayout) {
  EXPECT_EQ(offsetof(rsmi::Frequencies, num_supported), 0u);
  EXPECT_EQ(offsetof(rsmi::Frequencies, current), 4u);
  EXPECT_EQ(offsetof(rsmi::Frequencies, frequency), 8u);
  EXPECT_EQ(sizeof(rsmi::Frequencies), 8u + 8u * rsmi::kMaxNumFrequencies);
}

#ifdef ZEUS_HAVE_VENDOR_ROCM_SMI
TEST(RocmSmiTypesTest, MatchesTheVendorHeader) {
  EXPECT_EQ(rsmi::kStatusSuccess, RSMI_STATUS_SUCCESS);
  EXPECT_EQ(rsmi::kStatusInvalidArgs, RSMI_STATUS_INVALID_ARGS);
  EXPECT_EQ(rsmi::kStatusNotSupported, RSMI_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(rsmi::kStatusFileError, RSMI_STATUS_FILE_ERROR);
  EXPECT_EQ(rsmi::kStatusPermission, RSMI_STATUS_PERMISSION);
  EXPECT_EQ(rsmi::kStatusOutOfResources, RSMI_STATUS_OUT_OF_RESOURCES);
  EXPECT_EQ(rsmi::kStatusInternalException, RSMI_STATUS_INTERNAL_EXCEPTION);
  EXPECT_EQ(rsmi::kStatusInputOutOfBounds, RSMI_STATUS_INPUT_OUT_OF_BOUNDS);
  EXPECT_EQ(rsmi::kStatusInitError, RSMI_STATUS_INIT_ERROR);
  EXPECT_EQ(rsmi::kStatusNotYetImplemented, RSMI_STATUS_NOT_YET_IMPLEMENTED);
  EXPECT_EQ(rsmi::kStatusNotFound, RSMI_STATUS_NOT_FOUND);
  EXPECT_EQ(rsmi::kStatusInsufficientSize, RSMI_STATUS_INSUFFICIENT_SIZE);
  EXPECT_EQ(rsmi::kStatusInterrupt, RSMI_STATUS_INTERRUPT);
  EXPECT_EQ(rsmi::kStatusUnexpectedSize, RSMI_STATUS_UNEXPECTED_SIZE);
  EXPECT_EQ(rsmi::kStatusNoData, RSMI_STATUS_NO_DATA);
  EXPECT_EQ(rsmi::kStatusUnexpectedData, RSMI_STATUS_UNEXPECTED_DATA);
  EXPECT_EQ(rsmi::kStatusBusy, RSMI_STATUS_BUSY);
  EXPECT_EQ(rsmi::kStatusRefcountOverflow, RSMI_STATUS_REFCOUNT_OVERFLOW);
  EXPECT_EQ(rsmi::kStatusUnknownError, RSMI_STATUS_UNKNOWN_ERROR);
  EXPECT_EQ(sizeof(rsmi_status_t), sizeof(rsmi::Status));

  EXPECT_EQ(rsmi::kClkTypeSys, RSMI_CLK_TYPE_SYS);
  EXPECT_EQ(rsmi::kClkTypeMem, RSMI_CLK_TYPE_MEM);
  EXPECT_EQ(sizeof(rsmi_clk_type_t), sizeof(rsmi::ClkType));
  EXPECT_EQ(rsmi::kPerfLevelAuto, RSMI_DEV_PERF_LEVEL_AUTO);
  EXPECT_EQ(rsmi::kPerfLevelManual, RSMI_DEV_PERF_LEVEL_MANUAL);
  EXPECT_EQ(sizeof(rsmi_dev_perf_level_t), sizeof(rsmi::PerfLevel));

  EXPECT_EQ(rsmi::kMaxNumFrequencies, static_cast<size_t>(RSMI_MAX_NUM_FREQUENCIES));
  EXPECT_EQ(sizeof(rsmi_frequencies_t), sizeof(rsmi::Frequencies));
  EXPECT_EQ(offsetof(rsmi_frequencies_t, current), offsetof(rsmi::Frequencies, current));
  EXPECT_EQ(offsetof(rsmi_frequencies_t, frequency), offsetof(rsmi::Frequencies, frequency));

  // Parameter order of the calls whose order matters (cap range: max before min).
  static_assert(std::is_same_v<decltype(&::rsmi_dev_power_cap_range_get),
                               rsmi_status_t (*)(uint32_t, uint32_t, uint64_t*, uint64_t*)>);
  static_assert(std::is_same_v<decltype(&::rsmi_dev_energy_count_get),
                               rsmi_status_t (*)(uint32_t, uint64_t*, float*, uint64_t*)>);
  static_assert(std::is_same_v<decltype(&::rsmi_dev_clk_range_set),
                               rsmi_status_t (*)(uint32_t, uint64_t, uint64_t, rsmi_clk_type_t)>);
  static_assert(std::is_same_v<decltype(&::rsmi_dev_perf_level_set),
                               rsmi_status_t (*)(int32_t, rsmi_dev_perf_level_t)>);
  static_assert(
      std::is_same_v<decltype(&::rsmi_dev_name_get), rsmi_status_t (*)(uint32_t, char*, size_t)>);
  static_assert(std::is_same_v<decltype(&::rsmi_dev_serial_number_get),
                               rsmi_status_t (*)(uint32_t, char*, uint32_t)>);
}
#endif

}  // namespace
}  // namespace zeus
