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

json fixture(const std::string& name) {
  json doc = json::parse(read_file(kFixtures + "/" + name), nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << name;
  return doc;
}

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
  auto data = html_chart_data(fixture("sweep.json"));
  ASSERT_TRUE(data.has_value()) << data.status().message();
  expect_golden("sweep_html_data.json", data->dump(1) + "\n");
}

TEST(HtmlReport, RunChartDataMatchesGolden) {
  auto data = html_chart_data(fixture("run.json"));
  ASSERT_TRUE(data.has_value()) << data.status().message();
  expect_golden("run_html_data.json", data->dump(1) + "\n");
}

TEST(HtmlReport, PageCarriesTheChartDataItDraws) {
  const json doc = fixture("sweep.json");
  auto html = render_html(doc);
  ASSERT_TRUE(html.has_value()) << html.status().message();
  EXPECT_EQ(data_block(*html), *html_chart_data(doc));
}

TEST(HtmlReport, SweepChartsHaveOnePointPerLevelAndTheUslCurve) {
  const json doc = fixture("sweep.json");
  auto data = html_chart_data(doc);
  ASSERT_TRUE(data.has_value());
  const size_t levels = doc["levels"].size();
  std::vector<std::string> ids;
  for (const json& c : (*data)["charts"]) ids.push_back(c["id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"throughput", "latency", "little", "spectrum",
                                           "over_time", "cpu"}));
  const json& throughput = (*data)["charts"][0];
  auto non_null = [](const json& column) {
    size_t n = 0;
    for (const json& v : column)
      if (!v.is_null()) ++n;
    return n;
  };
  EXPECT_EQ(non_null(throughput["data"][1]), levels);
  EXPECT_EQ(non_null(throughput["data"][2]), static_cast<size_t>(kUslCurvePoints));
  ASSERT_FALSE(throughput["marks"].empty());
  EXPECT_EQ(throughput["marks"][0]["x"], doc["knee"]["concurrency"]);
  EXPECT_EQ(throughput["marks"][0]["style"], "knee");
  EXPECT_EQ((*data)["charts"][5]["point_labels"].size(), levels);  // a resource per level
}

TEST(HtmlReport, SummaryTableAndVerdictsReadWithoutJavaScript) {
  const json doc = fixture("sweep.json");
  auto html = render_html(doc);
  ASSERT_TRUE(html.has_value());
  EXPECT_NE(html->find("<table class=\"summary\">"), std::string::npos);
  EXPECT_NE(html->find("<tr class=\"knee\">"), std::string::npos);
  EXPECT_NE(html->find("&larr; knee"), std::string::npos);
  EXPECT_NE(html->find("saturated resource at the knee"), std::string::npos);
  EXPECT_NE(html->find("Little&#39;s law N = X * R holds"), std::string::npos);
  EXPECT_NE(html->find("<noscript>"), std::string::npos);
}

TEST(HtmlReport, EscapesTextAndTheDataBlock) {
  json doc = fixture("run.json");
  doc["target"] = "http://x/</script><script>alert(1)</script>";
  doc["params"]["url"] = doc["target"];
  auto html = render_html(doc);
  ASSERT_TRUE(html.has_value());
  EXPECT_EQ(html->find("<script>alert(1)"), std::string::npos);
  EXPECT_NE(html->find("&lt;/script&gt;"), std::string::npos);
  EXPECT_FALSE(data_block(*html).is_discarded());
}

TEST(HtmlReport, NamesNoNetworkAddressInSrcOrHref) {
  auto html = render_html(fixture("sweep.json"));
  ASSERT_TRUE(html.has_value());
  for (const char* bad : {"src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http"}) {
    EXPECT_EQ(html->find(bad), std::string::npos) << bad;
  }
}

TEST(HtmlReport, RejectsOtherSchemaVersionsAndKinds) {
  json doc = fixture("run.json");
  doc["schema_version"] = 2;
  auto r = render_html(doc);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("schema_version 2"), std::string::npos);
  EXPECT_FALSE(render_html(json{{"schema_version", 1}, {"kind", "ladder"}}).has_value());
  EXPECT_FALSE(render_html(json::array()).has_value());
  json wrong = fixture("sweep.json");
  wrong["levels"] = "many";
  EXPECT_FALSE(render_html(wrong).has_value());
}

TEST(HtmlReport, ShowsMissingOrMistypedFiguresAsDashes) {
  json doc = fixture("sweep.json");
  doc["levels"][0]["concurrency"] = "many";
  doc["levels"][1].erase("latency_ns");
  doc["levels"][1].erase("ranges");
  auto html = render_html(doc);
  ASSERT_TRUE(html.has_value()) << html.status().message();
  EXPECT_NE(html->find("<td>-</td>"), std::string::npos);
}

// Regression: a knee index outside the levels (or not a whole number) in a saved file was cast
// to size_t unchecked (undefined for negative or huge values, out of range otherwise).
TEST(HtmlReport, AKneeIndexOutsideTheLevelsIsIgnored) {
  for (json bad : {json(-1), json(1e30), json(7), json(2.5)}) {
    json doc = fixture("sweep.json");
    doc["knee"]["index"] = bad;
    auto html = render_html(doc);
    ASSERT_TRUE(html.has_value()) << bad << ": " << html.status().message();
    EXPECT_EQ(html->find("class=\"knee\""), std::string::npos) << bad;
  }
}

TEST(HtmlReport, CompareRefusesAClosedLoopSweepAgainstAnOpenLoopOne) {
  json closed = fixture("sweep.json");
  json open = closed;
  for (json& level : open["levels"]) level["mode"] = "open";
  auto html = render_compare_html(closed, open, "a.json", "b.json");
  ASSERT_FALSE(html.has_value());
  EXPECT_NE(html.status().message().find("open loop"), std::string::npos);
}

TEST(HtmlReport, CompareOverlaysTwoSweeps) {
  const json a = fixture("sweep.json");
  auto data = compare_chart_data(a, a, "a.json", "b.json");
  ASSERT_TRUE(data.has_value()) << data.status().message();
  ASSERT_EQ((*data)["charts"].size(), 2u);
  EXPECT_EQ((*data)["charts"][0]["series"][1]["label"], "B: b.json");
  EXPECT_FALSE(compare_chart_data(a, fixture("run.json"), "a", "b").has_value());
  EXPECT_TRUE(render_compare_html(a, a, "a", "b").has_value());
}

}  // namespace
}  // namespace knee::report
