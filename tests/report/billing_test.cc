// `knee lab billing`'s table: columns, the rate, and the verdict against the seed's window.
#include "report/billing.h"

#include <gtest/gtest.h>

namespace knee::report {
namespace {

constexpr BillingGoal kSeed{12'000'000, 4};

TEST(BillingTable, HeadingNamesTheDateTheStoreAndTheDaysBilled) {
  // 2026-01-01T00:00Z and 2026-01-30T23:59:59.999Z.
  EXPECT_EQ(billing_heading("2026-01-30", "/s/shipments.db", 1767225600000, 1769817599999, kSeed),
            "billing 2026-01-30 on /s/shipments.db: shipments created 2026-01-01 .. 2026-01-30 "
            "(30 days)\n"
            "method     records  sellers          charged    elapsed    records/s  the seed's 12M "
            "records at this rate\n");
  // The days counted from the two ends: both days included, UTC, before 1970 as after.
  EXPECT_NE(billing_heading("d", "l", 0, 0, kSeed).find("1970-01-01 .. 1970-01-01 (1 days)"),
            std::string::npos);
  EXPECT_NE(billing_heading("d", "l", 86'399'999, 86'400'000, kSeed).find("(2 days)"),
            std::string::npos);
  EXPECT_NE(billing_heading("d", "l", -1, 0, kSeed).find("1969-12-31 .. 1970-01-01 (2 days)"),
            std::string::npos);
  EXPECT_NE(billing_heading("d", "l", 0, 0, {1500, 4}).find("the seed's 1500 records"),
            std::string::npos);
}

TEST(BillingTable, ARowSaysWhetherTheSeedsJobFitsItsWindow) {
  // 3,000 records in 15 ms: 200,000 records/s, so 12M take 60 s.
  EXPECT_EQ(billing_row({"set", 3000, 7, 3516215, 0.015}, kSeed),
            "set           3000        7         35162.15   15.00 ms       200000  1.0 min: fits "
            "the 4 h window\n");
  // 100 records/s: 12M take 33.3 h.
  EXPECT_EQ(billing_row({"row", 1000, 3, 5, 10}, kSeed),
            "row           1000        3             0.05    10.00 s          100  33.3 h: misses "
            "the 4 h window\n");
  // Exactly at the window fits: 3,600 records at 1 a second take the 1 h there is.
  EXPECT_NE(billing_row({"row", 3600, 1, 0, 3600}, {3600, 1}).find("1.0 h: fits the 1 h window"),
            std::string::npos);
  EXPECT_NE(billing_row({"row", 3599, 1, 0, 3600}, {3600, 1}).find(": misses the 1 h window"),
            std::string::npos);
  // A time under a minute is in seconds: 12M at 1M records/s.
  EXPECT_NE(billing_row({"set", 1'000'000, 1, 0, 1}, kSeed).find("  12.00 s: fits"),
            std::string::npos);
}

TEST(BillingTable, NoRecordsBilledIsSaidSo) {
  EXPECT_NE(billing_row({"set", 0, 0, 0, 0.002}, kSeed).find("  no records billed\n"),
            std::string::npos);
}

}  // namespace
}  // namespace knee::report
