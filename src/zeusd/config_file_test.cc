// zeusd's config file: every mistake is refused with its line.
#include "zeusd/config_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace zeus::zeusd {
namespace {

std::string error_of(std::string_view text) {
  auto args = config_arguments(text, "zeusd.toml");
  EXPECT_FALSE(args.has_value()) << text;
  return args ? "" : args.error().message;
}

TEST(ZeusdConfig, KnownKeysBecomeArgumentsInFileOrder) {
  auto args = config_arguments(
      "# the daemon\nsocket = \"/run/z.sock\"\nsocket_group = \"zeus\"\nsocket-mode = \"0660\"\n"
      "tcp = 4938\nallow = [\"gpu-control=@zeus\", \"gpu-read=*\"]\nlog-level = \"debug\"\n"
      "lease-session-timeout = 45\n",
      "zeusd.toml");
  ASSERT_TRUE(args.has_value()) << args.error().to_string();
  EXPECT_EQ(*args, (std::vector<std::string>{"--socket", "/run/z.sock", "--socket-group", "zeus",
                                             "--socket-mode", "0660", "--tcp", "4938", "--allow",
                                             "gpu-control=@zeus", "--allow", "gpu-read=*",
                                             "--log-level", "debug",
                                             "--lease-session-timeout", "45"}));
  EXPECT_TRUE(config_arguments("", "empty.toml")->empty());
}

TEST(ZeusdConfig, UpstreamsNamesAreKeysToo) {
  auto args = config_arguments(
      "mode = \"both\"\nsocket-path = \"/run/z.sock\"\nsocket_gid = 44\n"
      "tcp-bind-address = \"0.0.0.0:4938\"\nenable = [\"gpu-read\", \"cpu-read\"]\n"
      "signing-key-path = \"/etc/zeusd/signing.key\"\ncpu-power-poll-hz = 5\n",
      "zeusd.toml");
  ASSERT_TRUE(args.has_value()) << args.error().to_string();
  EXPECT_EQ(*args, (std::vector<std::string>{
                       "--mode", "both", "--socket-path", "/run/z.sock", "--socket-gid", "44",
                       "--tcp-bind-address", "0.0.0.0:4938", "--enable", "gpu-read", "--enable",
                       "cpu-read", "--signing-key-path", "/etc/zeusd/signing.key",
                       "--cpu-power-poll-hz", "5"}));
  // A key that takes one value refuses a list.
  EXPECT_NE(error_of("signing-key-path = [\"a\", \"b\"]\n").find("takes one value"),
            std::string::npos);
}

TEST(ZeusdConfig, MistakesAreRefusedWithTheirLine) {
  EXPECT_NE(error_of("socket = \"/tmp/c.sock\"\nalow = [\"gpu-control=@x\"]\n")
                .find("line 2: unknown key 'alow'"),
            std::string::npos);
  EXPECT_NE(error_of("socket = \"/tmp/c.sock\"\nallow = [\"gpu-control=@x\"\n").find("line 2"),
            std::string::npos);
  EXPECT_NE(
      error_of("[zeusd]\nsocket = \"/tmp/c.sock\"\n").find("line 1: [zeusd] sections are not used"),
      std::string::npos);
  EXPECT_NE(error_of("socket = 5\n").find("socket must be a string"), std::string::npos);
  EXPECT_NE(error_of("log-level = [\"debug\"]\n").find("takes one value"), std::string::npos);
  EXPECT_NE(error_of("allow = [1]\n").find("line 1"), std::string::npos);
  static const char kGarbage[] =
      "\x7f"
      "ELF\x02\x01\x01\0\0\0\xff\xfe=\x01\n\x03\x04";
  const std::string garbage(kGarbage, sizeof(kGarbage) - 1);
  EXPECT_NE(error_of(garbage).find("not valid TOML"), std::string::npos);
}

TEST(ZeusdConfig, MissingFileIsNotFound) {
  auto args = config_file_arguments("/nonexistent/zeusd.toml");
  ASSERT_FALSE(args.has_value());
  EXPECT_EQ(args.error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace zeus::zeusd
