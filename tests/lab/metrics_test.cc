// /metrics over a real socket: counts by route and status, cumulative histograms whose +Inf
// bucket is the count, and the shipment service's figures when it runs.
#include "lab/metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "lab/lab_server.h"
#include "support/blocking_client.h"

namespace knee::lab {
namespace {

using knee::testing::Client;

// "name{labels}" -> value, from the exposition's sample lines.
std::map<std::string, double> samples_of(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

TEST(Metrics, CountsRequestsByRouteAndStatusWithCumulativeHistograms) {
  ServerOptions options;
  options.port = 0;
  options.wait = std::chrono::milliseconds(2);
  auto server = LabServer::start(options);
  ASSERT_TRUE(server);
  Client client((*server)->address());
  for (int i = 0; i < 3; ++i) ASSERT_EQ(client.get("/fast")->status, 200);
  ASSERT_EQ(client.get("/tracking?no=1")->status, 200);
  ASSERT_EQ(client.get("/nowhere")->status, 404);
  ASSERT_EQ(client.get("/slow-async?ms=x")->status, 400);
  auto r = client.get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->field("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  const auto m = samples_of(r->body);
  EXPECT_EQ(m.at(R"(knee_lab_requests_total{route="/fast",status="200"})"), 3);
  EXPECT_EQ(m.at(R"(knee_lab_requests_total{route="/tracking",status="200"})"), 1);
  EXPECT_EQ(m.at(R"(knee_lab_requests_total{route="other",status="404"})"), 1);
  EXPECT_EQ(m.at(R"(knee_lab_requests_total{route="/slow-async",status="400"})"), 1);
  EXPECT_EQ(m.at("knee_lab_requests_in_flight"), 1) << "the /metrics request itself";
  // /tracking waited 2 ms: nothing below 1 ms (a lower bound only: no test asserts a speed).
  const std::string t = R"(knee_lab_request_duration_seconds_bucket{route="/tracking",le=")";
  EXPECT_EQ(m.at(t + R"(0.001"})"), 0);
  EXPECT_EQ(m.at(t + R"(+Inf"})"), 1);
  EXPECT_EQ(m.at(R"(knee_lab_request_duration_seconds_count{route="/tracking"})"), 1);
  EXPECT_GE(m.at(R"(knee_lab_request_duration_seconds_sum{route="/tracking"})"), 0.002);
  // Cumulative: every bucket at least the one before, +Inf the count.
  double previous = 0;
  for (double le : kLatencyBucketsS) {
    const double v = m.at(R"(knee_lab_request_duration_seconds_bucket{route="/fast",le=")" +
                          sample_value(le) + R"("})");
    EXPECT_GE(v, previous);
    previous = v;
  }
  EXPECT_EQ(m.at(R"(knee_lab_request_duration_seconds_bucket{route="/fast",le="+Inf"})"), 3);
  // The second scrape counts the first.
  const auto again = samples_of(client.get("/metrics")->body);
  EXPECT_EQ(again.at(R"(knee_lab_requests_total{route="/metrics",status="200"})"), 1);
}

TEST(Metrics, SampleValuesAreWhatPrometheusParses) {
  EXPECT_EQ(sample_value(3), "3");
  EXPECT_EQ(sample_value(0.0001), "0.0001");
  EXPECT_EQ(sample_value(2.5), "2.5");
  EXPECT_EQ(sample_value(0.000123456789), "0.000123456789");
}

}  // namespace
}  // namespace knee::lab
