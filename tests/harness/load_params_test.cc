// The report's record of a load (harness/load_params.h): what the engine ran with, only what
// applies, and the start time.
#include "harness/load_params.h"

#include <gtest/gtest.h>

#include <ctime>

#include "engine/load_spec.h"

namespace knee::harness {
namespace {

report::LoadParams params_of(const engine::LoadSpec& spec, int repeats = 1) {
  auto o = spec.to_options();
  EXPECT_TRUE(o) << o.status().message();
  return o ? load_params(*o, spec.url, repeats) : report::LoadParams{};
}

TEST(LoadParams, APlainClosedLoopRecordsNoOptionalField) {
  engine::LoadSpec spec;
  spec.url = "http://127.0.0.1/x";
  const report::LoadParams p = params_of(spec);
  EXPECT_EQ(p.url, spec.url);
  EXPECT_EQ(p.method, "GET");
  EXPECT_DOUBLE_EQ(p.duration_s, 2);
  EXPECT_DOUBLE_EQ(p.warmup_s, 1);
  EXPECT_DOUBLE_EQ(p.grace_s, 10) << "the grace defaults to the request timeout";
  EXPECT_EQ(p.arrival, "uniform");
  EXPECT_FALSE(p.tls);
  EXPECT_FALSE(p.protocol);
  EXPECT_FALSE(p.per_connection);
  EXPECT_FALSE(p.shipments) << "no {shipment} in the request";
  EXPECT_FALSE(p.new_connection_per_request);
  EXPECT_FALSE(p.mix);
  EXPECT_FALSE(p.stages);
  EXPECT_FALSE(p.part);
  EXPECT_FALSE(p.requests);
}

// Regression (a new user's trial): the Poisson arrivals' seed was not recorded, so a saved result
// could not be drawn again.
TEST(LoadParams, PoissonArrivalsRecordTheirSeed) {
  engine::LoadSpec spec;
  spec.url = "http://127.0.0.1/x";
  spec.rate = 100;
  spec.rate_given = true;
  spec.arrival = "poisson";
  spec.seed = 7;
  EXPECT_EQ(params_of(spec).seed, 7u);
  spec.arrival = "uniform";
  EXPECT_FALSE(params_of(spec).seed) << "uniform arrivals draw nothing";
}

TEST(LoadParams, ACountIsRecorded) {
  engine::LoadSpec spec;
  spec.url = "http://127.0.0.1/x";
  spec.requests = 200;
  spec.requests_given = true;
  EXPECT_EQ(params_of(spec).requests, 200u);
}

TEST(LoadParams, HttpsHttp2AndShipmentsAreRecordedWhenUsed) {
  engine::LoadSpec spec;
  spec.url = "https://127.0.0.1:8443/tracking/{shipment}";
  spec.h2 = true;
  spec.streams = 4;
  spec.insecure = true;
  spec.tls_version = "1.3";
  spec.zipf = 1.1;
  spec.zipf_given = true;
  const report::LoadParams p = params_of(spec, 3);
  EXPECT_EQ(p.url, spec.url) << "as typed, placeholders unexpanded";
  EXPECT_EQ(p.repeats, 3);
  EXPECT_EQ(p.protocol, "h2");
  EXPECT_EQ(p.per_connection, 4);
  ASSERT_TRUE(p.tls);
  EXPECT_FALSE(p.tls->verify);
  EXPECT_EQ(p.tls->version, "1.3");
  EXPECT_EQ(p.shipments, 100000);
  EXPECT_DOUBLE_EQ(p.zipf.value_or(0), 1.1);
  spec = engine::LoadSpec{};
  spec.url = "http://127.0.0.1/";
  spec.h2c = true;
  EXPECT_EQ(params_of(spec).protocol, "h2c");
  spec.h2c = false;
  spec.no_keepalive = true;
  EXPECT_EQ(params_of(spec).new_connection_per_request, true);
}

TEST(LoadParams, AMixStagesAndAPartAreRecordedAsTheyWereGiven) {
  engine::LoadSpec spec;
  spec.url = "http://127.0.0.1/";
  spec.mix = "GET /tracking/{shipment}=3,GET /health=1";
  spec.stages = "2s:100,3.5s:400";
  spec.arrival = "poisson";
  const report::LoadParams p = params_of(spec);
  EXPECT_EQ(p.mix, "GET /tracking/{shipment}=3,GET /health=1");
  EXPECT_EQ(p.stages, "2s:100,3.5s:400");
  EXPECT_EQ(p.arrival, "poisson");
  EXPECT_EQ(p.shipments, 100000) << "an endpoint of the mix names {shipment}";

  auto o = spec.to_options();
  ASSERT_TRUE(o);
  o->share.index = 1;
  o->share.count = 4;
  const report::LoadParams part = load_params(*o, spec.url, 1);
  ASSERT_TRUE(part.part);
  EXPECT_EQ(part.part->index, 1);
  EXPECT_EQ(part.part->count, 4);
}

TEST(LoadParams, TheStartTimeIsIso8601UtcOfNow) {
  const std::time_t before = std::time(nullptr);
  const std::string t = now_iso8601();
  std::tm tm{};
  const char* end = strptime(t.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  ASSERT_NE(end, nullptr) << t;
  EXPECT_EQ(*end, '\0') << t;
  const std::time_t parsed = timegm(&tm);
  EXPECT_GE(parsed, before);
  EXPECT_LE(parsed, std::time(nullptr));
}

}  // namespace
}  // namespace knee::harness
