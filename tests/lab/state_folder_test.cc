// The lab's state folder: where it is by default, and where a store's location points.
#include "lab/state_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../support/temp_dir.h"

namespace knee::lab {
namespace {

TEST(StateFolder, FollowsAnAbsoluteXdgStateHome) {
  EXPECT_EQ(default_state_dir("/var/x", "/home/u"), "/var/x/knee/lab");
}

TEST(StateFolder, IgnoresAnEmptyOrRelativeXdgStateHome) {
  // The XDG Base Directory Specification: a relative path in these variables is invalid.
  EXPECT_EQ(default_state_dir("", "/home/u"), "/home/u/.local/state/knee/lab");
  EXPECT_EQ(default_state_dir("rel/dir", "/home/u"), "/home/u/.local/state/knee/lab");
  EXPECT_EQ(default_state_dir(nullptr, "/home/u"), "/home/u/.local/state/knee/lab");
}

TEST(StateFolder, WithoutHomeFallsBackToTheWorkingFolder) {
  EXPECT_EQ(default_state_dir(nullptr, nullptr), "./.local/state/knee/lab");
  EXPECT_EQ(default_state_dir(nullptr, ""), "./.local/state/knee/lab");
}

TEST(StoreLocation, MakesTheStateFolderAndNamesItsDatabase) {
  testing::TempDir tmp;
  const std::string dir = tmp.path() + "/a/b";
  auto location = store_location(dir, "");
  ASSERT_TRUE(location) << location.status().message();
  EXPECT_EQ(*location, dir + "/shipments.db");
  EXPECT_EQ(*location, database_in(dir));
  EXPECT_TRUE(std::filesystem::is_directory(dir));
}

TEST(StoreLocation, TakesAPostgresUrlAsIs) {
  auto location = store_location("", "postgresql://knee@127.0.0.1:5432/knee");
  ASSERT_TRUE(location) << location.status().message();
  EXPECT_EQ(*location, "postgresql://knee@127.0.0.1:5432/knee");
}

TEST(StoreLocation, RefusesBothOptionsAndOtherUrls) {
  auto both = store_location("/tmp/x", "postgresql://knee@127.0.0.1/knee");
  ASSERT_FALSE(both);
  EXPECT_EQ(both.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_EQ(both.status().message().rfind("--state and --db: give one", 0), 0u)
      << both.status().message();
  auto other = store_location("", "mysql://x/y");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_EQ(other.status().message().rfind("--db: 'mysql://x/y' is not a postgresql:// URL", 0), 0u)
      << other.status().message();
}

TEST(StoreLocation, SaysWhyAFolderCannotBeMade) {
  testing::TempDir tmp;
  const std::string file = tmp.path() + "/file";
  std::ofstream(file) << "not a folder";
  auto location = store_location(file + "/sub", "");
  ASSERT_FALSE(location);
  EXPECT_EQ(location.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(location.status().message().find("--state: cannot make the folder '" + file + "/sub'"),
            std::string::npos)
      << location.status().message();
  // The OS's reason: a path through a file is not a directory (ENOTDIR).
  EXPECT_NE(location.status().message().find("Not a directory"), std::string::npos)
      << location.status().message();
}

}  // namespace
}  // namespace knee::lab
