// The Traffic Lab's page (report/sim.h): the calibration a sweep gives (service time from the
// ceiling, delay from the lowest level, the latency shape), the page's data block, and the
// sweep report's "Simulate this server" section. The simulation itself is checked against
// theory by sim_theory_test.js, under Node.js.
#include "report/sim.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/document.h"
#include "report/html.h"
#include "report/record.h"

namespace knee::report {
namespace {

using nlohmann::json;

// The fixture is a file of knee before records (its shape comes from the summary's six
// quantiles); the golden sweep carries records (its shape from the recorded histogram).
SweepDocument read_sweep_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = parse_document(text.str(), "sweep.json");
  EXPECT_TRUE(doc) << doc.status().message();
  return std::get<SweepDocument>(*doc);
}
SweepDocument fixture_sweep() {
  return read_sweep_file(std::string(KNEE_REPORT_FIXTURES) + "/sweep.json");
}

TEST(SimCalibration, TakesTheServiceTimeFromTheCeilingAndTheDelayFromTheLowestLevel) {
  const SweepDocument sweep = fixture_sweep();
  auto c = calibrate_sim(sweep, "sweep.json", 1);
  ASSERT_TRUE(c) << c.status().message();
  double ceiling = 0;
  for (const LevelFigures& l : sweep.levels) ceiling = std::max(ceiling, l.median.throughput_rps);
  EXPECT_EQ(c->ceiling_rps, ceiling);
  EXPECT_NEAR(c->service_ms, 1000.0 / ceiling, 1e-3 * 1000.0 / ceiling);
  const double low_mean_ms = sweep.levels.front().median.latency_ns.mean / 1e6;
  EXPECT_NEAR(c->delay_ms, low_mean_ms - c->service_ms, 1e-3 * low_mean_ms);
  EXPECT_EQ(c->loop, "closed");
  ASSERT_EQ(c->points.size(), sweep.levels.size());
  EXPECT_EQ(c->points.front().load, 1.0);
  // The shape: quantiles 0 to 1, never decreasing.
  ASSERT_EQ(c->shape.size(), 6u);  // min, p50, p90, p99, p99.9, max: no records
  EXPECT_EQ(c->shape.front().first, 0.0);
  EXPECT_EQ(c->shape.back().first, 1.0);
  for (size_t i = 1; i < c->shape.size(); ++i)
    EXPECT_GE(c->shape[i].second, c->shape[i - 1].second);

  // Two workers: twice the service time; the lowest level (1 in flight) does not queue.
  auto two = calibrate_sim(sweep, "sweep.json", 2);
  ASSERT_TRUE(two);
  EXPECT_NEAR(two->service_ms, 2 * c->service_ms, 1e-3);
}

TEST(SimCalibration, TakesTheShapeFromTheRecordedHistogramWhenThereIsOne) {
  const SweepDocument sweep = read_sweep_file(std::string(KNEE_GOLDEN_DIR) + "/sweep.json");
  ASSERT_FALSE(sweep.levels.front().records.empty());
  auto c = calibrate_sim(sweep, "sweep.json", 1);
  ASSERT_TRUE(c) << c.status().message();
  ASSERT_EQ(c->shape.size(), 17u);
  const core::Histogram& h = sweep.levels.front().records.front().result.stats.latency_ns;
  // The median of the shape is the histogram's, less the delay.
  EXPECT_NEAR(c->shape[7].second,
              std::max(0.0, static_cast<double>(h.value_at_percentile(50)) / 1e6 - c->delay_ms),
              1e-9);
  for (size_t i = 1; i < c->shape.size(); ++i)
    EXPECT_GE(c->shape[i].second, c->shape[i - 1].second);
}

// A reviewer's find: a lowest level that already queues gave a "measured shape" that was mostly
// waiting; it now gives no delay and no shape (exponential service).
TEST(SimCalibration, ALowestLevelThatQueuesGivesNoDelayAndNoShape) {
  SweepDocument sweep = fixture_sweep();
  sweep.levels.erase(sweep.levels.begin());  // now from concurrency 2, on 1 worker
  auto c = calibrate_sim(sweep, "sweep.json", 1);
  ASSERT_TRUE(c) << c.status().message();
  EXPECT_EQ(c->delay_ms, 0);
  EXPECT_TRUE(c->shape.empty());
  EXPECT_EQ(calibrated(SimSettings{}, *c).dist, "exp");
  EXPECT_NE(c->how.find("already queues"), std::string::npos) << c->how;
}

TEST(SimCalibration, ASweepWithoutThroughputIsRefusedNamingFrom) {
  SweepDocument sweep = fixture_sweep();
  for (LevelFigures& l : sweep.levels) l.median.throughput_rps = 0;
  auto c = calibrate_sim(sweep, "empty.json", 1);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().field(), "from");
  EXPECT_NE(c.status().message().find("empty.json"), std::string::npos);
}

TEST(SimPage, CarriesTheCalibratedConfigurationAndNothingThatEndsItsScripts) {
  const SweepDocument sweep = fixture_sweep();
  auto c = calibrate_sim(sweep, "a</script>.json", 1);
  ASSERT_TRUE(c);
  const SimSettings s = calibrated(SimSettings{}, *c);
  EXPECT_EQ(s.loop, "closed");
  EXPECT_EQ(s.dist, "measured");
  EXPECT_EQ(s.concurrency, 1);
  const std::string page = render_sim_html(s, *c);
  const std::string open = "<script type=\"application/json\" id=\"knee-sim\">";
  const size_t at = page.find(open);
  ASSERT_NE(at, std::string::npos);
  const size_t end = page.find("</script>", at);
  const json data = json::parse(page.substr(at + open.size(), end - at - open.size()));
  EXPECT_EQ(data["config"]["service_ms"].get<double>(), c->service_ms);
  EXPECT_EQ(data["calibration"]["points"].size(), sweep.levels.size());
  EXPECT_EQ(data["calibration"]["from"], "a</script>.json");  // escaped, so still one block
  EXPECT_EQ(data["shape"].size(), 6u);
  EXPECT_NE(page.find("KneeSim"), std::string::npos);
  EXPECT_EQ(page.find("src=\"http"), std::string::npos);

  const std::string plain = render_sim_html(SimSettings{}, std::nullopt);
  EXPECT_EQ(plain.find("id=\"agreement\""), std::string::npos);
}

TEST(SimPage, TheSweepReportSaysHowToSimulateTheServer) {
  const std::string html = render_html(fixture_sweep());
  EXPECT_NE(html.find("<h2>Simulate this server</h2>"), std::string::npos);
  EXPECT_NE(html.find("knee model sim --from SWEEP.json"), std::string::npos);
}

}  // namespace
}  // namespace knee::report
