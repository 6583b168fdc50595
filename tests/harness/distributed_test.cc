// A load from several processes (harness/distributed.h), alone: without mpirun there is no
// group, this process is the root, its plan is its --part and its files are its own.
#include "harness/distributed.h"

#include <gtest/gtest.h>

#include <variant>

#include "support/report_fixtures.h"
#include "support/temp_dir.h"

namespace knee::harness {
namespace {

// Alone (not under mpirun): no group, this process is the root, its plan is its --part.
TEST(Distributed, AloneThePlanIsThisProcesssPartAndItsFilesAreOpened) {
  testing::TempDir dir;
  engine::LoadSpec load;
  load.url = "http://127.0.0.1:8080/";
  load.connections = 8;
  load.part = "1/2";
  auto o = load.to_options();
  ASSERT_TRUE(o) << o.status().message();
  engine::Plan plan;
  plan.levels = {{*o}};
  const std::string json = dir.path() + "/part.json";
  Distributed group;
  OutputPaths out;
  out.json = json;
  ASSERT_TRUE(group.join(load, out));
  EXPECT_FALSE(group.active());
  EXPECT_TRUE(group.root());
  ResultFiles files;
  ASSERT_TRUE(group.prepare(load, plan, /*shared_target=*/true, 1.8e9, files));
  EXPECT_EQ(plan.levels[0][0].connections, 4);
  EXPECT_TRUE(files.json.wanted()) << "alone, the files stay open for the result";
  auto mine = group.merge(report::Document(knee::testing::golden_run_report()));
  ASSERT_TRUE(mine && *mine);
  EXPECT_TRUE(std::holds_alternative<report::RunDocument>(**mine));
}

TEST(Distributed, APartOfATargetNotSharedIsRefused) {
  engine::LoadSpec load;
  load.url = "http://127.0.0.1:8080/";
  load.part = "0/2";
  auto o = load.to_options();
  ASSERT_TRUE(o) << o.status().message();
  engine::Plan plan;
  plan.levels = {{*o}};
  Distributed group;
  ASSERT_TRUE(group.join(load, {}));
  ResultFiles files;
  core::Status s = group.prepare(load, plan, /*shared_target=*/false, 1.8e9, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("--part: give the URL of the target")) << s.message();
  EXPECT_EQ(plan.levels[0][0].connections, 10) << "nothing split";
}

TEST(Distributed, JsonPartsAreOnlyForMpirun) {
  engine::LoadSpec load;
  OutputPaths out;
  out.json_parts = "/tmp/never";
  Distributed group;
  core::Status s = group.join(load, out);
  ASSERT_FALSE(s);
  EXPECT_TRUE(s.message().starts_with("--json-parts: only under mpirun")) << s.message();
}

}  // namespace
}  // namespace knee::harness
