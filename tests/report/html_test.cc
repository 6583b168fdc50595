// The HTML report (report/html.h) from the fixtures in tests/report/fixtures/ (JSON of a real
// short sweep and run): the chart data block against a golden file, and the page's promises
// (summary table without JavaScript, escaped data block, no network address, schema check).
//
// After an intended change of the chart data, regenerate the golden file and review the diff:
//   KNEE_UPDATE_GOLDEN=1 build/asan/report_test --gtest_filter='HtmlReport.*'
//   git diff tests/report/golden/
// (The fixtures themselves come from `knee sweep --levels 1,2,4,8,16,32,64 --duration 2s
// --warmup 0.5s --json tests/report/fixtures/sweep.json` and `knee run URL -c 8 -d 3s -w 0.5s
// --json`; replace them only with the same flags, then regenerate the golden file.)
#include "report/html.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "support/report_fixtures.h"

namespace knee::report {
namespace {

using nlohmann::json;

const std::string kGolden = KNEE_GOLDEN_DIR;
const std::string kFixtures = KNEE_GOLDEN_DIR "/../fixtures";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Document fixture(const std::string& name) {
  auto doc = parse_document(read_file(kFixtures + "/" + name), name);
  EXPECT_TRUE(doc) << doc.status().message();
  return doc ? std::move(doc).value() : Document(RunDocument{});
}
SweepDocument sweep_fixture() { return std::get<SweepDocument>(fixture("sweep.json")); }
RunDocument run_fixture() { return std::get<RunDocument>(fixture("run.json")); }

// The knee-data block of a page, parsed back.
json data_block(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"knee-data\">";
  const size_t at = html.find(open);
  if (at == std::string::npos) return json();
  const size_t from = at + open.size();
  return json::parse(html.substr(from, html.find("</script>", from) - from), nullptr, false);
}

void expect_golden(const std::string& name, const std::string& got) {
  const std::string path = kGolden + "/" + name;
  if (std::getenv("KNEE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << got;
    GTEST_SKIP() << "rewrote " << path;
  }
  EXPECT_EQ(read_file(path), got) << "golden file " << path
                                  << " differs; regenerate with KNEE_UPDATE_GOLDEN=1 if intended";
}

TEST(HtmlReport, SweepChartDataMatchesGolden) {
  expect_golden("sweep_html_data.json", html_chart_data(sweep_fixture()).dump(1) + "\n");
}

TEST(HtmlReport, RunChartDataMatchesGolden) {
  expect_golden("run_html_data.json", html_chart_data(run_fixture()).dump(1) + "\n");
}

TEST(HtmlReport, ThePageNamesTheProtocolAndTheRequestsInFlight) {
  const std::string page = render_html(knee::testing::golden_h2_run_report());
  EXPECT_NE(
      page.find("HTTP/2 over TLS, 10 streams per connection (TLSv1.3 TLS_AES_256_GCM_SHA384)"),
      std::string::npos);
  EXPECT_NE(page.find("closed loop, 4 connections x 10 = 40 in flight"), std::string::npos);
  const std::string h1 = render_html(knee::testing::golden_run_report());
  EXPECT_NE(h1.find(">HTTP/1.1<"), std::string::npos);
}

// A mix's endpoints in their own table, and --stages' intended rate beside the throughput.
TEST(HtmlReport, AMixHasAnEndpointTableAndStagesTheirIntendedRate) {
  const RunDocument doc = knee::testing::golden_mix_run_report();
  const std::string page = render_html(doc);
  EXPECT_NE(page.find("<h2>Per endpoint</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"name\">GET /tracking/{shipment}</td><td>81.1 %</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<td class=\"name\">POST /events</td>"), std::string::npos);
  EXPECT_NE(page.find("mix GET /tracking/{shipment}=416.67/s,POST /events @event.json=97.22/s on"),
            std::string::npos);
  const json data = html_chart_data(doc);
  const json* over_time = nullptr;
  for (const json& c : data["charts"]) {
    if (c["id"] == "over_time") over_time = &c;
  }
  ASSERT_NE(over_time, nullptr);
  ASSERT_EQ((*over_time)["series"].size(), 3u);
  EXPECT_EQ((*over_time)["series"][2]["label"], "intended rate (req/s)");
  EXPECT_EQ((*over_time)["data"][3][0], 300);
  // Without stages the chart keeps its two series, and without a mix there is no such table.
  const std::string plain = render_html(knee::testing::golden_open_run_report());
  EXPECT_EQ(plain.find("Per endpoint"), std::string::npos);
  // Through a lab stack: each process's CPU, and each replica's requests and share.
  EXPECT_NE(page.find("<h2>Per process</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"name\">app2</td><td>5002</td><td>61</td><td>61</td><td>500</td>"
                      "<td>50.0 %</td>"),
            std::string::npos);
  EXPECT_EQ(plain.find("Per process"), std::string::npos);
}

TEST(HtmlReport, PageCarriesTheChartDataItDraws) {
  const SweepDocument doc = sweep_fixture();
  EXPECT_EQ(data_block(render_html(doc)), html_chart_data(doc));
}

TEST(HtmlReport, SweepChartsHaveOnePointPerLevelAndTheUslCurve) {
  const SweepDocument doc = sweep_fixture();
  const json data = html_chart_data(doc);
  const size_t levels = doc.levels.size();
  std::vector<std::string> ids;
  for (const json& c : data["charts"]) ids.push_back(c["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"throughput", "latency", "little", "spectrum",
                                           "over_time", "cpu"}));
  const json& throughput = data["charts"][0];
  auto non_null = [](const json& column) {
    size_t n = 0;
    for (const json& v : column)
      if (!v.is_null()) ++n;
    return n;
  };
  EXPECT_EQ(non_null(throughput["data"][1]), levels);
  EXPECT_EQ(non_null(throughput["data"][2]), static_cast<size_t>(kUslCurvePoints));
  ASSERT_FALSE(throughput["marks"].empty());
  ASSERT_TRUE(doc.knee.concurrency);
  EXPECT_EQ(throughput["marks"][0]["x"], *doc.knee.concurrency);
  EXPECT_EQ(throughput["marks"][0]["style"], "knee");
  EXPECT_EQ(data["charts"][5]["point_labels"].size(), levels);  // a resource per level
}

TEST(HtmlReport, SummaryTableAndVerdictsReadWithoutJavaScript) {
  const std::string html = render_html(sweep_fixture());
  EXPECT_NE(html.find("<table class=\"summary\">"), std::string::npos);
  EXPECT_NE(html.find("<tr class=\"knee\">"), std::string::npos);
  EXPECT_NE(html.find("&larr; knee"), std::string::npos);
  EXPECT_NE(html.find("saturated resource at the knee"), std::string::npos);
  EXPECT_NE(html.find("Little&#39;s law N = X * R holds"), std::string::npos);
  EXPECT_NE(html.find("<noscript>"), std::string::npos);
}

TEST(HtmlReport, EscapesTextAndTheDataBlock) {
  RunDocument doc = run_fixture();
  doc.target = "http://x/</script><script>alert(1)</script>";
  doc.params.url = doc.target;
  const std::string html = render_html(doc);
  EXPECT_EQ(html.find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;"), std::string::npos);
  EXPECT_FALSE(data_block(html).is_discarded());
}

TEST(HtmlReport, NamesNoNetworkAddressInSrcOrHref) {
  const std::string html = render_html(sweep_fixture());
  for (const char* bad : {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  }
}

TEST(HtmlReport, ShowsUnknownFiguresAsDashes) {
  SweepDocument doc = sweep_fixture();
  doc.levels[0].median.resources.reset();  // not sampled: no server CPU
  EXPECT_NE(render_html(doc).find("<td>-</td>"), std::string::npos);
}

// Regression: a knee index outside the levels in a saved file was used unchecked.
TEST(HtmlReport, AKneeIndexOutsideTheLevelsIsIgnored) {
  SweepDocument doc = sweep_fixture();
  doc.knee.index = doc.levels.size();
  EXPECT_EQ(render_html(doc).find("class=\"knee\""), std::string::npos);
  // Negative, huge or fractional indexes do not even read.
  for (json bad : {json(-1), json(1e30), json(2.5)}) {
    json j = to_json(sweep_fixture());
    j["knee"]["index"] = bad;
    EXPECT_FALSE(from_json(j, "x.json")) << bad;
  }
}

TEST(HtmlReport, CompareRefusesAClosedLoopSweepAgainstAnOpenLoopOne) {
  const SweepDocument closed = sweep_fixture();
  SweepDocument open = closed;
  for (LevelFigures& level : open.levels) level.mode = LoopMode::kOpen;
  auto html = render_compare_html(closed, open, "a.json", "b.json");
  ASSERT_FALSE(html.has_value());
  EXPECT_NE(html.status().message().find("open loop"), std::string::npos);
}

TEST(HtmlReport, CompareOverlaysTwoSweeps) {
  const SweepDocument a = sweep_fixture();
  auto data = compare_chart_data(a, a, "a.json", "b.json");
  ASSERT_TRUE(data.has_value()) << data.status().message();
  ASSERT_EQ((*data)["charts"].size(), 2u);
  EXPECT_EQ((*data)["charts"][0]["series"][1]["label"], "B: b.json");
  EXPECT_TRUE(render_compare_html(a, a, "a", "b").has_value());
}

}  // namespace
}  // namespace knee::report
