// The shipment service through the lab server, on a small SQLite data set made by the loader:
// the read flow (cache and store), the write flow (durable 201s, group commit, bad input) and
// the server staying up through it all.
#include "lab/shipment_service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "lab/lab_server.h"
#include "store/data.h"
#include "support/blocking_client.h"
#include "support/postgres.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace knee::lab {
namespace {

using knee::testing::Client;
using knee::testing::Response;

const store::DataSpec kSpec{500, 2, 5, 3};

// Service options with `change` applied to the defaults.
template <typename F>
ServiceOptions with(F change) {
  ServiceOptions o;
  change(o);
  return o;
}

class ShipmentServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = store::load_data(db_, kSpec, false, {});
    ASSERT_TRUE(loaded) << loaded.status().what();
  }
  std::unique_ptr<LabServer> start(ServiceOptions service = {}) {
    ServerOptions options;
    options.port = 0;
    service.database = db_;
    options.service = service;
    auto server = LabServer::start(options);
    EXPECT_TRUE(server) << server.status().what();
    return server ? std::move(server).value() : nullptr;
  }
  static nlohmann::json json_of(const std::optional<Response>& r) {
    return r ? nlohmann::json::parse(r->body, nullptr, false) : nlohmann::json();
  }
  static std::string event_body(int64_t id, int step, int64_t at_ms) {
    return nlohmann::json{{"no", store::tracking_number(id)},
                          {"state", "delivered"},
                          {"zone", "42"},
                          {"step", step},
                          {"atMs", at_ms}}
        .dump();
  }
  knee::testing::TempDir dir_{"knee-service"};
  std::string db_ = dir_.file("shipments.db");
  store::DataGenerator gen_{kSpec};
};

TEST_F(ShipmentServiceTest, TrackingAnswersTheLatestStateFromTheStoreThenTheCache) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  for (int64_t id : {1, 250, 500}) {
    for (int round = 0; round < 2; ++round) {  // a miss, then a hit
      auto r = client.get("/tracking/" + store::tracking_number(id));
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 200);
      const store::TrackingState want = gen_.latest_state(id);
      const nlohmann::json j = json_of(r);
      EXPECT_EQ(j["no"], want.tracking_no);
      EXPECT_EQ(j["state"], want.state);
      EXPECT_EQ(j["zone"], want.zone);
      EXPECT_EQ(j["step"], want.step);
      EXPECT_EQ(j["atMs"], want.at_ms);
    }
  }
  const nlohmann::json health = json_of(client.get("/health"));
  EXPECT_EQ(health["cache"]["hits"], 3);
  EXPECT_EQ(health["cache"]["misses"], 3);
  EXPECT_EQ(health["cache"]["hitRatio"], 0.5);
  EXPECT_EQ(health["store"]["reads"], 3);
  EXPECT_EQ(health["store"]["kind"], "sqlite");
}

TEST_F(ShipmentServiceTest, MetricsCountCacheStoreAndCommits) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  ASSERT_EQ(client.get("/tracking/" + store::tracking_number(1))->status, 200);
  ASSERT_EQ(client.get("/tracking/" + store::tracking_number(1))->status, 200);
  ASSERT_EQ(client.post("/events", event_body(2, 5, 1'900'000'000'000))->status, 201);
  const std::string text = client.get("/metrics")->body;
  for (const char* line :
       {"knee_lab_cache_hits_total 1\n", "knee_lab_cache_misses_total 1\n",
        "knee_lab_store_reads_total 1\n", "knee_lab_store_commits_total 1\n",
        "knee_lab_store_events_committed_total 1\n", "knee_lab_commit_batch_size_count 1\n",
        "knee_lab_commit_batch_size_bucket{le=\"1\"} 1\n",
        "knee_lab_store_duration_seconds_count{op=\"read\"} 1\n",
        "knee_lab_store_duration_seconds_count{op=\"commit\"} 1\n",
        "knee_lab_requests_total{route=\"/tracking/{no}\",status=\"200\"} 2\n",
        "knee_lab_requests_total{route=\"/events\",status=\"201\"} 1\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << " in\n" << text;
  }
}

TEST_F(ShipmentServiceTest, UnknownShipmentIs404AndHeadHasNoBody) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  auto r = client.get("/tracking/KN0000009999");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json_of(r)["error"], "no shipment KN0000009999");
  client.send("HEAD /tracking/" + store::tracking_number(7) + " HTTP/1.1\r\nHost: lab\r\n\r\n");
  auto head = client.read_response(/*head_request=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_GT(std::stoi(head->field("Content-Length")), 0);
  EXPECT_EQ(client.get("/fast")->status, 200) << "the connection goes on";
}

TEST_F(ShipmentServiceTest, AnEventIs201AndTheNextReadSeesIt) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  const std::string no = store::tracking_number(9);
  ASSERT_EQ(client.get("/tracking/" + no)->status, 200);  // now cached
  auto created = client.post("/events", event_body(9, 5, 1'800'000'000'000));
  ASSERT_TRUE(created);
  EXPECT_EQ(created->status, 201);
  EXPECT_EQ(created->head.substr(0, 21), "HTTP/1.1 201 Created\r");
  EXPECT_EQ(json_of(created)["step"], 5);
  const nlohmann::json after = json_of(client.get("/tracking/" + no));
  EXPECT_EQ(after["state"], "delivered");
  EXPECT_EQ(after["atMs"], 1'800'000'000'000);
  // Regression: an event out of order (older than the shipment's latest) was written through
  // into the cache, and reads answered it. The latest stays what reads see, cached or not.
  ASSERT_EQ(client.post("/events", event_body(9, 2, 1'700'000'000'000))->status, 201);
  EXPECT_EQ(json_of(client.get("/tracking/" + no))["step"], 5);
  const std::string other = store::tracking_number(10);  // not cached: the event is older too
  ASSERT_EQ(client.post("/events", event_body(10, 1, 1'000))->status, 201);
  EXPECT_EQ(json_of(client.get("/tracking/" + other))["step"], gen_.latest_state(10).step);
  // Durable: a store opened afresh holds it.
  server.reset();
  auto store = store::open_store(db_);
  ASSERT_TRUE(store);
  auto latest = (*store)->latest_state(no);
  ASSERT_TRUE(latest && latest->has_value());
  EXPECT_EQ((*latest)->step, 5);
}

TEST_F(ShipmentServiceTest, BadEventsGet400WithTheReasonAndTheServerKeepsServing) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  struct Case {
    std::string body;
    std::string content_type;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"{\"no\":", "application/json", "the body is not JSON"},
      {"[1,2]", "application/json", "the body is not a JSON object"},
      {R"({"no":"KN0000000001","zone":"1","step":2})", "application/json", "missing field 'state'"},
      {R"({"no":"KN0000000001","state":"x","zone":"1","step":"2"})", "application/json",
       "field 'step' must be an integer from 1 to 1000"},
      {R"({"no":"KN0000000001","state":"x","zone":"1","step":2,"atMs":-5})", "application/json",
       "field 'atMs' must be Unix milliseconds, an integer from 0 to 253402300799999 (year 9999)"},
      {R"({"no":"KN0000000001","state":"x","zone":"1","step":2,"atMs":9223372036854775807})",
       "application/json",
       "field 'atMs' must be Unix milliseconds, an integer from 0 to 253402300799999 (year 9999)"},
      {event_body(1, 2, 5), "text/plain", "Content-Type must be application/json"},
      {event_body(1, 2, 5), "", "no Content-Type: send application/json"},
  };
  for (const Case& c : cases) {
    auto r = client.post("/events", c.body, c.content_type);
    ASSERT_TRUE(r) << c.body;
    EXPECT_EQ(r->status, 400) << c.body;
    EXPECT_EQ(json_of(r)["error"], c.reason) << c.body;
  }
  auto charset = client.post("/events", event_body(1, 2, 5), "Application/JSON; charset=utf-8");
  ASSERT_TRUE(charset);
  EXPECT_EQ(charset->status, 201) << "media type parameters and case are accepted";
  auto unknown = client.post("/events", event_body(9999, 2, 5));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(json_of(unknown)["error"], "no shipment KN0000009999");
  const std::string big(20'000, ' ');
  auto too_large = client.post("/events", big);
  ASSERT_TRUE(too_large);
  EXPECT_EQ(too_large->status, 413);
  EXPECT_EQ(too_large->head.substr(0, 30), "HTTP/1.1 413 Content Too Large");
  Client other(server->address());
  auto get = other.get("/events");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->field("Allow"), "POST");
  EXPECT_EQ(other.get("/fast")->status, 200);
}

TEST_F(ShipmentServiceTest, ABodyArrivingInPiecesIsReadWhole) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  const std::string body = event_body(3, 6, 1'900'000'000'000);
  const std::string request =
      "POST /events HTTP/1.1\r\nHost: lab\r\nContent-Type: "
      "application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  for (size_t i = 0; i < request.size(); i += 7) {
    client.send(std::string_view(request).substr(i, 7));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  auto r = client.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(json_of(r)["step"], 6);
}

TEST_F(ShipmentServiceTest, PipelinedRequestsBehindAStoreWaitAreAnsweredInOrder) {
  auto server = start(with([](ServiceOptions& o) { o.cache_entries = 0; }));
  ASSERT_TRUE(server);
  Client client(server->address());
  std::string batch;
  for (int64_t id = 1; id <= 20; ++id) {
    batch += "GET /tracking/" + store::tracking_number(id) + " HTTP/1.1\r\nHost: lab\r\n\r\n";
    batch += "GET /fast HTTP/1.1\r\nHost: lab\r\n\r\n";
  }
  client.send(batch);
  for (int64_t id = 1; id <= 20; ++id) {
    auto tracking = client.read_response();
    ASSERT_TRUE(tracking);
    EXPECT_EQ(json_of(tracking)["no"], store::tracking_number(id));
    auto fast = client.read_response();
    ASSERT_TRUE(fast);
    EXPECT_EQ(json_of(fast)["ok"], true);
  }
}

TEST_F(ShipmentServiceTest, GroupCommitPutsConcurrentEventsInOneTransaction) {
  auto server = start(with([](ServiceOptions& o) {
    o.commit_batch = 16;
    o.commit_delay = std::chrono::seconds(1);  // the most allowed: a slow host still fills it
  }));
  ASSERT_TRUE(server);
  // 16 clients, each with one event in flight: the writer waits (up to 1 s) for the batch of 16
  // and commits them together.
  std::vector<std::thread> clients;
  std::atomic<int> created{0};
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&, i] {
      Client c(server->address());
      auto r = c.post("/events", event_body(100 + i, 7, 1'900'000'000'000));
      if (r && r->status == 201) created.fetch_add(1);
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(created.load(), 16);
  Client client(server->address());
  const nlohmann::json health = json_of(client.get("/health"));
  EXPECT_EQ(health["store"]["eventsCommitted"], 16);
  EXPECT_EQ(health["store"]["commits"], 1);
  EXPECT_EQ(health["store"]["meanBatch"], 16.0);
}

TEST_F(ShipmentServiceTest, StopAnswersWhatTheStoreThreadsStillHold) {
  auto server = start(with([](ServiceOptions& o) {
    o.commit_batch = 8;
    o.commit_delay = std::chrono::milliseconds(300);
  }));
  ASSERT_TRUE(server);
  Client client(server->address());
  client.send(
      "POST /events HTTP/1.1\r\nHost: lab\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(event_body(4, 9, 5).size()) + "\r\n\r\n" + event_body(4, 9, 5));
  // Until the event is in flight (queued, waiting for its batch): /health counts it and itself.
  Client watcher(server->address());
  for (int i = 0; i < 500 && json_of(watcher.get("/health"))["inFlight"] != 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  server->request_stop();
  auto r = client.read_response();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 201);
  EXPECT_EQ(r->field("Connection"), "close");
  client.shutdown_write();  // ends the server's lingering close at once
  EXPECT_EQ(server->wait(), 0);
}

TEST_F(ShipmentServiceTest, WithoutTheServiceItsRoutesSayHowToStartIt) {
  ServerOptions options;
  options.port = 0;
  auto server = LabServer::start(options);
  ASSERT_TRUE(server);
  Client client((*server)->address());
  auto r = client.get("/tracking/KN0000000001");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_NE(r->body.find("knee serve --state DIR"), std::string::npos);
  EXPECT_EQ(client.get("/tracking?no=7")->status, 200) << "seed 000's endpoint is unchanged";
}

TEST_F(ShipmentServiceTest, ADatabaseThatIsNotADataSetFailsTheStart) {
  ServerOptions options;
  options.port = 0;
  options.service = ServiceOptions{};
  options.service->database = dir_.file("none.db");
  auto server = LabServer::start(options);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(server.status().message().find("knee lab data"), std::string::npos);
}

}  // namespace
}  // namespace knee::lab

namespace knee::lab {
namespace {

// The same service on PostgreSQL, and what it does when the database goes away and comes back.
TEST(ShipmentServicePostgres, AStoreAwayIs503AndTheServiceRecoversWhenItReturns) {
  std::string error;
  auto pg = knee::testing::PostgresServer::start(error);
  ASSERT_TRUE(pg) << error;
  const std::string url = pg->create_database("service");
  ASSERT_TRUE(store::load_data(url, store::DataSpec{200, 1, 2, 1}, false, {}));
  ServerOptions options;
  options.port = 0;
  options.service = ServiceOptions{};
  options.service->database = url;
  options.service->cache_entries = 0;  // every read reaches the store
  auto server = LabServer::start(options);
  ASSERT_TRUE(server) << server.status().what();
  Client client((*server)->address());
  const std::string no = store::tracking_number(7);
  const std::string event =
      R"({"no":")" + no + R"(","state":"delivered","zone":"42","step":9,"atMs":1900000000000})";
  ASSERT_EQ(client.get("/tracking/" + no)->status, 200);
  ASSERT_EQ(client.post("/events", event)->status, 201);

  ASSERT_TRUE(pg->stop());
  for (int i = 0; i < 6; ++i) {  // more than the store threads: each finds it gone
    auto r = client.get("/tracking/" + no);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_NE(r->body.find("\"error\":\"store: postgresql://127.0.0.1:"), std::string::npos)
        << r->body;
  }
  auto write = client.post("/events", event);
  ASSERT_TRUE(write);
  EXPECT_EQ(write->status, 503);
  EXPECT_EQ(client.get("/fast")->status, 200) << "the server itself keeps serving";

  ASSERT_TRUE(pg->restart());
  for (int i = 0; i < 6; ++i) {
    auto r = client.get("/tracking/" + no);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << r->body;
    EXPECT_NE(r->body.find("\"step\":9"), std::string::npos) << r->body;
  }
  EXPECT_EQ(client.post("/events", event)->status, 201);
}

}  // namespace
}  // namespace knee::lab

namespace knee::lab {
namespace {

TEST_F(ShipmentServiceTest, BillingRunsBothWaysAndChargesTheSame) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  nlohmann::json runs[2];
  int i = 0;
  for (const char* method : {"row", "set"}) {
    auto r = client.post(std::string("/billing/run?date=2026-01-30&method=") + method, "", "");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    runs[i] = json_of(r);
    EXPECT_EQ(runs[i]["method"], method);
    EXPECT_EQ(runs[i]["date"], "2026-01-30");
    EXPECT_EQ(runs[i]["records"], kSpec.records) << "the window holds the whole data set";
    EXPECT_EQ(runs[i]["sellers"], kSpec.sellers);
    EXPECT_GT(runs[i]["recordsPerSecond"].get<double>(), 0);
    ++i;
  }
  EXPECT_EQ(runs[0]["amountCents"], runs[1]["amountCents"]) << "both ways charge the same";
  EXPECT_EQ(client.get("/tracking/" + store::tracking_number(3))->status, 200);
}

TEST_F(ShipmentServiceTest, BadBillingRequestsSayWhatIsWrong) {
  auto server = start();
  ASSERT_TRUE(server);
  Client client(server->address());
  struct Case {
    std::string target;
    std::string reason;
  };
  for (const Case& c :
       {Case{"/billing/run", "give the bill date: /billing/run?date=YYYY-MM-DD"},
        Case{"/billing/run?date=2026-02-30",
             "'2026-02-30' is not a date; give YYYY-MM-DD, e.g. 2026-01-30"},
        Case{"/billing/run?date=2026-01-30&method=fast",
             "method is row (a loop over records) or set (one INSERT ... SELECT)"}}) {
    auto r = client.post(c.target, "", "");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << c.target;
    EXPECT_EQ(json_of(r)["error"], c.reason) << c.target;
  }
  auto get = client.get("/billing/run?date=2026-01-30");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
}

}  // namespace
}  // namespace knee::lab

namespace knee::lab {
namespace {

TEST(RedisUrl, ReadsHostPortAndDatabase) {
  auto a = parse_redis_url("redis://127.0.0.1:6390/2");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 6390);
  EXPECT_EQ(a->database, 2);
  auto d = parse_redis_url("redis://cache");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->port, 6379);
  EXPECT_EQ(d->database, 0);
  for (const char* bad :
       {"http://x", "redis://", "redis://h:0", "redis://h:x", "redis://h/x", "redis://u:p@h"}) {
    EXPECT_FALSE(parse_redis_url(bad)) << bad;
  }
}

// The read cache in Redis: a miss goes to the store and fills Redis, a hit comes back from it,
// an event writes through, and a Redis that goes away costs misses, not errors.
TEST_F(ShipmentServiceTest, RedisCachesReadsAndTakesWritesThrough) {
  std::string error;
  auto redis = knee::testing::RedisServer::start(error);
  ASSERT_TRUE(redis) << error;
  auto server = start(with([&](ServiceOptions& o) { o.cache_url = redis->url(); }));
  ASSERT_TRUE(server);
  Client client(server->address());
  const std::string no = store::tracking_number(11);
  auto first = client.get("/tracking/" + no);
  auto second = client.get("/tracking/" + no);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(second->body, first->body);
  nlohmann::json health = json_of(client.get("/health"));
  EXPECT_EQ(health["cache"]["kind"], "redis");
  EXPECT_EQ(health["cache"]["hits"], 1);
  EXPECT_EQ(health["cache"]["misses"], 1);
  EXPECT_EQ(health["store"]["reads"], 1) << "the hit did not reach the store";

  ASSERT_EQ(client.post("/events", event_body(11, 8, 1'950'000'000'000))->status, 201);
  const nlohmann::json after = json_of(client.get("/tracking/" + no));
  EXPECT_EQ(after["step"], 8) << "the event deleted the cached state; the store had the new one";
  health = json_of(client.get("/health"));
  EXPECT_EQ(health["cache"]["hits"], 1);
  EXPECT_EQ(health["store"]["reads"], 2);
  // An event older than the shipment's latest does not become what reads answer.
  ASSERT_EQ(client.post("/events", event_body(11, 2, 1'800'000'000'000))->status, 201);
  EXPECT_EQ(json_of(client.get("/tracking/" + no))["step"], 8);
  EXPECT_EQ(json_of(client.get("/tracking/" + no))["step"], 8) << "nor from the cache";

  redis->stop();
  auto away = client.get("/tracking/" + store::tracking_number(12));
  ASSERT_TRUE(away);
  EXPECT_EQ(away->status, 200) << "answered from the store";
  health = json_of(client.get("/health"));
  EXPECT_EQ(health["store"]["reads"], 4) << "3 misses before, and this one";
  EXPECT_EQ(health["store"]["errors"], 0);
}

TEST_F(ShipmentServiceTest, ARedisThatIsNotThereFailsTheStart) {
  ServerOptions options;
  options.port = 0;
  options.service = ServiceOptions{};
  options.service->database = db_;
  options.service->cache_url = "redis://127.0.0.1:1";
  auto server = LabServer::start(options);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.status().code(), core::Status::Code::kUnavailable);
  EXPECT_NE(server.status().message().find("redis 127.0.0.1:1:"), std::string::npos)
      << server.status().message();
  options.service->cache_url = "memcached://x";
  auto bad = LabServer::start(options);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().field(), "cache");
}

}  // namespace
}  // namespace knee::lab
