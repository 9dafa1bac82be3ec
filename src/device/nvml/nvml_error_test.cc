#include "device/nvml/nvml_error.h"

#include <gtest/gtest.h>

namespace zeus::nvml {
namespace {

TEST(NvmlErrorTest, EveryDocumentedCodeHasAName) {
  for (nvmlReturn_t code = 0; code <= kNvmlErrorInvalidState; ++code) {
    EXPECT_EQ(nvml_return_name(code).find("NVML_ERROR_" + std::to_string(code)), std::string::npos)
        << "code " << code << " has no symbolic name";
  }
  EXPECT_EQ(nvml_return_name(kNvmlErrorUnknown), "NVML_ERROR_UNKNOWN");
  EXPECT_EQ(nvml_return_name(12345), "NVML_ERROR_12345");
}

TEST(NvmlErrorTest, MapsCodesToCanonicalCodes) {
  EXPECT_EQ(nvml_error_code(kNvmlErrorNoPermission), ErrorCode::kPermissionDenied);
  EXPECT_EQ(nvml_error_code(kNvmlErrorNotSupported), ErrorCode::kNotSupported);
  EXPECT_EQ(nvml_error_code(kNvmlErrorFunctionNotFound), ErrorCode::kNotSupported);
  EXPECT_EQ(nvml_error_code(kNvmlErrorInvalidArgument), ErrorCode::kInvalidArgument);
  EXPECT_EQ(nvml_error_code(kNvmlErrorFreqNotSupported), ErrorCode::kInvalidArgument);
  EXPECT_EQ(nvml_error_code(kNvmlErrorGpuIsLost), ErrorCode::kUnavailable);
  EXPECT_EQ(nvml_error_code(kNvmlErrorDriverNotLoaded), ErrorCode::kUnavailable);
  EXPECT_EQ(nvml_error_code(kNvmlErrorLibraryNotFound), ErrorCode::kUnavailable);
  EXPECT_EQ(nvml_error_code(kNvmlErrorInsufficientPower), ErrorCode::kUnavailable);
  EXPECT_EQ(nvml_error_code(kNvmlErrorNotFound), ErrorCode::kNotFound);
  EXPECT_EQ(nvml_error_code(kNvmlErrorGpuNotFound), ErrorCode::kNotFound);
  EXPECT_EQ(nvml_error_code(kNvmlErrorUninitialized), ErrorCode::kInternal);
  EXPECT_EQ(nvml_error_code(kNvmlErrorUnknown), ErrorCode::kInternal);
  EXPECT_EQ(nvml_error_code(4242), ErrorCode::kInternal);
}

TEST(NvmlErrorTest, MessageCarriesOperationNvmlTextNameAndFix) {
  Error error = nvml_error(kNvmlErrorNoPermission, "Insufficient Permissions",
                           "setting the power limit to 150 W of GPU 0");
  EXPECT_EQ(error.code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(error.message,
            "setting the power limit to 150 W of GPU 0 failed: Insufficient Permissions "
            "(NVML_ERROR_NO_PERMISSION). This needs root or CAP_SYS_ADMIN: run as root, grant "
            "CAP_SYS_ADMIN, or run zeusd.");

  Error lost = nvml_error(kNvmlErrorGpuIsLost, "GPU is lost", "reading the power");
  EXPECT_NE(lost.message.find("fell off the bus"), std::string::npos);
  EXPECT_NE(lost.message.find("dmesg"), std::string::npos);
}

TEST(NvmlErrorTest, NullNvmlMessageIsTolerated) {
  Error error = nvml_error(kNvmlErrorTimeout, nullptr, "reading the power");
  EXPECT_EQ(error.code, ErrorCode::kUnavailable);
  EXPECT_NE(error.message.find("no NVML message"), std::string::npos);
  EXPECT_NE(error.message.find("NVML_ERROR_TIMEOUT"), std::string::npos);
}

TEST(NvmlErrorTest, EveryFixIsNonEmptyAndDistinctFromTheName) {
  for (nvmlReturn_t code : {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,  15, 16,
                            17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 999, 77}) {
    EXPECT_GT(nvml_fix(code).size(), 10u) << code;
  }
}

}  // namespace
}  // namespace zeus::nvml
