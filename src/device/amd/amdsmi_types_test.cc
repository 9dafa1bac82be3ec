// Our declarations of AMD SMI's structs must have the C layouts of amdsmi.h (sizes and offsets
// as AMD's Python wrapper, amdsmi_wrapper.py, lists them per ABI).
#include "device/amd/amdsmi_types.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "device/amd/amdsmi_api.h"

namespace zeus {
namespace {

TEST(AmdSmiTypesTest, CommonLayouts) {
  EXPECT_EQ(sizeof(amdsmi::PowerCapInfo), 64u);
  EXPECT_EQ(offsetof(amdsmi::PowerCapInfo, min_power_cap), 24u);
  EXPECT_EQ(sizeof(amdsmi::ClkInfo), 32u);
  EXPECT_EQ(offsetof(amdsmi::ClkInfo, clk_locked), 12u);
  EXPECT_EQ(offsetof(amdsmi::EnumerationInfo, hip_id), 12u);
  EXPECT_EQ(offsetof(amdsmi::EnumerationInfo, hip_uuid), 16u);
  EXPECT_EQ(sizeof(amdsmi::KfdInfo), 64u);
  EXPECT_EQ(offsetof(amdsmi::KfdInfo, node_id), 8u);
  EXPECT_EQ(offsetof(amdsmi::AsicInfo, market_name), 0u);
  EXPECT_EQ(sizeof(amdsmi::Bdf), 8u);
  EXPECT_EQ(sizeof(amdsmi::VersionBuffer), 24u);
  EXPECT_EQ(offsetof(amdsmi::VersionBuffer, build), 16u);
}

TEST(AmdSmiTypesTest, PowerInfoLayoutsPerAbi) {
  EXPECT_EQ(sizeof(amdsmi::PowerInfo24), 68u);
  EXPECT_EQ(offsetof(amdsmi::PowerInfo24, average_socket_power), 4u);
  EXPECT_EQ(sizeof(amdsmi::PowerInfo25), 40u);
  EXPECT_EQ(offsetof(amdsmi::PowerInfo25, current_socket_power), 8u);
  EXPECT_EQ(offsetof(amdsmi::PowerInfo25, average_socket_power), 12u);
  EXPECT_EQ(sizeof(amdsmi::PowerInfo26), 192u);
  EXPECT_EQ(offsetof(amdsmi::PowerInfo26, current_socket_power), 8u);
  EXPECT_EQ(offsetof(amdsmi::PowerInfo26, average_socket_power), 12u);
  EXPECT_GE(amdsmi::kPowerInfoBufferSize, sizeof(amdsmi::PowerInfo26));
}

TEST(AmdSmiTypesTest, AbiFromTheVersionsFirstWord) {
  amdsmi::VersionBuffer version{};
  version.words[0] = 24;
  EXPECT_EQ(amdsmi_abi_of(version), AmdSmiAbi::k24);
  version.words[0] = 25;
  EXPECT_EQ(amdsmi_abi_of(version), AmdSmiAbi::k25);
  version.words[0] = 26;
  EXPECT_EQ(amdsmi_abi_of(version), AmdSmiAbi::k26);
  version.words[0] = 23;
  EXPECT_FALSE(amdsmi_abi_of(version).has_value());
  version.words[0] = 6;  // an old {major, minor, ...} version
  EXPECT_FALSE(amdsmi_abi_of(version).has_value());
}

TEST(AmdSmiTypesTest, NaPowerFieldsDecodeAsMissing) {
  amdsmi::PowerInfo24 info{};
  info.current_socket_power = 0xFFFF;
  info.average_socket_power = 212;
  unsigned char buffer[amdsmi::kPowerInfoBufferSize] = {};
  std::memcpy(buffer, &info, sizeof(info));
  AmdSmiPower power = decode_power_info(AmdSmiAbi::k24, buffer);
  EXPECT_FALSE(power.current_w.has_value());
  EXPECT_EQ(power.average_w, 212u);
  info.current_socket_power = 0xFFFFFFFF;
  std::memcpy(buffer, &info, sizeof(info));
  EXPECT_FALSE(decode_power_info(AmdSmiAbi::k24, buffer).current_w.has_value());
}

}  // namespace
}  // namespace zeus
