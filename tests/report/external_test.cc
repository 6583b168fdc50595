// An external benchmark's sweep as a document (report/external.h): the knee and the limit past
// it, Little's law with the tool's N, the JSON read back equal and re-rendered to the same text,
// the HTML page's charts, and `knee report a.json b.json` on two of them.
#include "report/external.h"

#include <gtest/gtest.h>

#include "report/compare.h"
#include "report/html.h"
#include "report/render.h"
#include "support/report_fixtures.h"

namespace knee::report {
namespace {

// A fio level: IOPS, the mean latency that makes N = X * R hold, and vda's figures.
core::ExternalRun fio_run(int depth, double iops, double disk_ops, double await_ms, double queue) {
  core::ExternalRun r;
  r.level = depth;
  r.command = "fio --name=r --filename=/data/f --iodepth=" + std::to_string(depth);
  r.wall_s = 2.1;
  r.tool_cpu_cores = 0.4;
  r.measured.unit = "IOPS";
  r.measured.total.throughput = iops;
  r.measured.total.bandwidth_bytes_per_s = iops * 4096;
  r.measured.total.latency_mean_ns = depth / iops * 1e9;
  r.measured.total.latency_p50_ns = depth / iops * 0.9e9;
  r.measured.total.latency_p99_ns = depth / iops * 3e9;
  r.measured.total.in_flight = depth;
  r.measured.total.cpu_pct = 40;
  r.measured.threads = 1;
  r.measured.runtime_s = 2;
  r.measured.files = {"/data/f"};
  core::ResourceUse u;
  u.window_s = 2;
  u.intervals = 8;
  u.cpu_busy_pct = {30, 20};
  u.cpu_busy_all_pct = 25;
  core::DiskUse d;
  d.device = "vda";
  d.reads_per_s = disk_ops;
  d.read_await_ms = await_ms;
  d.queue_size = queue;
  d.util_pct = 80;
  u.disks.push_back(d);
  r.use = u;
  return r;
}

ExternalSweepDocument fio_sweep(double scale = 1.0) {
  ExternalSweepSetup setup;
  setup.command = "fio --name=r --filename=/data/f --iodepth={N}";
  setup.adapter = "fio";
  setup.started_at = "2026-12-02T07:00:00Z";
  setup.timeout_s = 600;
  setup.device = "vda";
  setup.fs_type = "ext4";
  const std::vector<std::vector<core::ExternalRun>> levels = {
      {fio_run(1, 11000 * scale, 11000, 0.09, 1)},
      {fio_run(4, 32000 * scale, 32000, 0.12, 3.9)},
      {fio_run(16, 64000 * scale, 64000, 0.25, 15.8)},
      {fio_run(64, 89000 * scale, 89000, 0.72, 63)},
      {fio_run(256, 89500 * scale, 89400, 2.85, 250)}};
  return analyse_external_sweep(setup, levels, testing::fixed_host());
}

TEST(ExternalSweepReport, KneeAndTheLimitPastIt) {
  const ExternalSweepDocument d = fio_sweep();
  EXPECT_EQ(d.unit, "IOPS");
  ASSERT_TRUE(d.knee.index.has_value());
  EXPECT_EQ(d.levels[*d.knee.index].level, 64);
  ASSERT_TRUE(d.knee.saturated_index.has_value());
  EXPECT_EQ(*d.knee.saturated_index, *d.knee.index + 1);
  EXPECT_EQ(d.knee.saturated, "disk");
  EXPECT_EQ(d.levels[2].saturated.resource, "none");
  EXPECT_NE(d.knee.summary.find("iodepth 64"), std::string::npos) << d.knee.summary;
  EXPECT_NE(d.knee.summary.find("IOPS"), std::string::npos) << d.knee.summary;
  for (const ExternalLevelFigures& l : d.levels) {
    ASSERT_TRUE(l.little.has_value());
    EXPECT_TRUE(l.little->holds) << l.level;
    ASSERT_TRUE(l.disk.has_value());
    EXPECT_EQ(l.disk->device, "vda");
  }
  EXPECT_TRUE(d.usl.has_value() || d.usl_error.has_value());
  const std::string text = render_external_sweep_text(d);
  EXPECT_NE(text.find("<- knee"), std::string::npos) << text;
  EXPECT_NE(text.find("files /data/f on device vda (ext4)"), std::string::npos) << text;
  EXPECT_NE(text.find("limit past the knee (iodepth 256): disk"), std::string::npos) << text;
}

TEST(ExternalSweepReport, LittlesLawFlagsAToolThatKeptFewerInFlight) {
  ExternalSweepSetup setup;
  setup.command = "fio --rate_iops=5000 --iodepth={N}";
  setup.adapter = "fio";
  core::ExternalRun r = fio_run(16, 5000, 5000, 0.09, 0.4);
  r.measured.total.latency_mean_ns = 88e3;  // X * R = 0.44, not 16
  const ExternalSweepDocument d = analyse_external_sweep(setup, {{r}}, testing::fixed_host());
  ASSERT_TRUE(d.levels[0].little.has_value());
  EXPECT_FALSE(d.levels[0].little->holds);
  EXPECT_EQ(d.levels[0].saturated.resource, "none");
  EXPECT_NE(d.levels[0].saturated.detail.find("own pacing"), std::string::npos);
  bool warned = false;
  for (const std::string& w : d.warnings) warned = warned || w.find("Little's law") == 0;
  EXPECT_TRUE(warned);
}

TEST(ExternalSweepReport, ReadsBackEqualAndRendersTheSameText) {
  const ExternalSweepDocument d = fio_sweep();
  const std::string json = to_json(d).dump(2);
  auto back = parse_document(json, "fio.json");
  ASSERT_TRUE(back.has_value()) << back.status().message();
  ASSERT_TRUE(std::holds_alternative<ExternalSweepDocument>(*back));
  EXPECT_EQ(std::get<ExternalSweepDocument>(*back), d);
  EXPECT_EQ(render_text(*back), render_external_sweep_text(d));
  EXPECT_EQ(kind_words(*back), "a sweep of an external benchmark (fio)");
}

TEST(ExternalSweepReport, HtmlDrawsThroughputLatencyAndLittle) {
  const ExternalSweepDocument d = fio_sweep();
  const nlohmann::json data = html_chart_data(d);
  std::vector<std::string> ids;
  for (const auto& c : data["charts"]) ids.push_back(c["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"throughput", "latency", "little"}));
  EXPECT_EQ(data["charts"][0]["data"][0].size(), 5u);
  auto page = render_html(Document(d), "fio.json");
  ASSERT_TRUE(page.has_value());
  EXPECT_NE(page->find("knee-data"), std::string::npos);
  EXPECT_EQ(page->find("http://"), std::string::npos);  // offline
}

TEST(ExternalSweepReport, CompareTwoSweepsOfTheSameToolOnly) {
  auto c = compare(Document(fio_sweep()), "a.json", Document(fio_sweep(1.5)), "b.json");
  ASSERT_TRUE(c.has_value()) << c.status().message();
  ASSERT_EQ(c->levels.size(), 5u);
  const FigureFigures& x = c->levels[0].figures.at("throughput_rps");
  EXPECT_DOUBLE_EQ(*x.ratio, 1.5);
  EXPECT_FALSE(c->levels[0].figures.contains("p50_ns"));  // the tools give no p50 range
  const std::string text = render_compare_text(*c);
  EXPECT_NE(text.find("throughput(IOPS)"), std::string::npos) << text;
  auto mixed =
      compare(Document(fio_sweep()), "a.json", Document(testing::golden_sweep_report()), "b.json");
  ASSERT_FALSE(mixed.has_value());
  EXPECT_NE(mixed.status().message().find("not the same figure"), std::string::npos);
}

TEST(ExternalSweepReport, LevelNameFromTheOptionBeforeN) {
  EXPECT_EQ(level_name_of("fio --iodepth={N} --x"), "iodepth");
  EXPECT_EQ(level_name_of("pgbench -c {N} -T 5"), "clients");
  EXPECT_EQ(level_name_of("redis-benchmark -c {N} -P 4"), "clients");
  EXPECT_EQ(level_name_of("fio --numjobs {N}"), "numjobs");
  EXPECT_EQ(level_name_of("./bench {N}"), "level");
}

}  // namespace
}  // namespace knee::report
