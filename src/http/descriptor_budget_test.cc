// descriptor_budget.h: the connection cap fits the descriptors there are.
#include "http/descriptor_budget.h"

#include <gtest/gtest.h>

namespace zeus::http::detail {
namespace {

TEST(DescriptorBudgetTest, TheCapIsClampedToTheDescriptorLimit) {
  // nofile 256 with 20 in use: 32 kept for the program, 204 left for connections.
  ConnectionBudget b = connection_budget(256, 20, 10000, 64);
  EXPECT_TRUE(b.clamped);
  EXPECT_EQ(b.reserve, 32u);
  EXPECT_EQ(b.max_connections + b.privileged_reserve, 204u);
  EXPECT_EQ(b.privileged_reserve, 51u);  // a quarter
  EXPECT_GT(b.max_connections, 100u);
}

TEST(DescriptorBudgetTest, WhatFitsIsKept) {
  ConnectionBudget b = connection_budget(1 << 20, 100, 10000, 64);
  EXPECT_FALSE(b.clamped);
  EXPECT_EQ(b.max_connections, 10000u);
  EXPECT_EQ(b.privileged_reserve, 64u);
  EXPECT_EQ(b.reserve, (1u << 20) / 16);
}

TEST(DescriptorBudgetTest, ASmallCapKeepsItsValueWhenOnlyTheReserveDoesNotFit) {
  ConnectionBudget b = connection_budget(256, 20, 150, 64);
  EXPECT_TRUE(b.clamped);
  EXPECT_EQ(b.max_connections, 150u);
  EXPECT_EQ(b.privileged_reserve, 54u);
}

TEST(DescriptorBudgetTest, NothingLeftStillServesOne) {
  ConnectionBudget b = connection_budget(64, 60, 10000, 64);
  EXPECT_TRUE(b.clamped);
  EXPECT_EQ(b.max_connections, 1u);
  EXPECT_EQ(b.privileged_reserve, 0u);
}

}  // namespace
}  // namespace zeus::http::detail
