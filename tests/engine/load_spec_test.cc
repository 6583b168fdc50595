// LoadSpec (engine/load_spec.h): the typed text of a load becomes the options it names, and each
// bad value is refused naming its option field, so cli/ can name the flag.
#include "engine/load_spec.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;

LoadSpec spec(std::string url = "http://127.0.0.1:8080/x") {
  LoadSpec s;
  s.url = std::move(url);
  return s;
}

TEST(LoadSpec, DefaultsAreAClosedLoopOfTenConnectionsForTwoSeconds) {
  auto o = spec().to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->connections, 10);
  EXPECT_EQ(o->threads, 1);
  EXPECT_EQ(o->duration, 2s);
  EXPECT_EQ(o->warmup, 1s);
  EXPECT_EQ(o->timeout, 10s);
  EXPECT_FALSE(o->rate_rps);
  EXPECT_FALSE(o->max_connections);
  EXPECT_TRUE(o->keepalive);
  EXPECT_EQ(o->per_connection, 1);
  EXPECT_EQ(o->request.url.port, 8080);
  EXPECT_EQ(o->request.url.target, "/x");
}

TEST(LoadSpec, InputFilesAreTheBodiesAndCertificatesTheLoadReads) {
  LoadSpec s;
  EXPECT_TRUE(s.input_files().empty());
  s.body_file = "b.json";
  s.cacert = "ca.pem";
  s.cert = "c.pem";
  s.key = "k.pem";
  s.mix = "GET /a=1,POST /e @e.json=2,PUT /p @p.txt=1";
  EXPECT_EQ(s.input_files(),
            (std::vector<std::string>{"b.json", "ca.pem", "c.pem", "k.pem", "e.json", "p.txt"}));
  s.mix = "POST /e @e.json";  // no weight: refused later, by the mix's own check
  EXPECT_EQ(s.input_files().size(), 4u);
}

TEST(LoadSpec, ARequestCountWithoutADurationRunsUpToTenMinutes) {
  LoadSpec s = spec();
  s.requests = 500;
  s.requests_given = true;
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->requests, 500u);
  EXPECT_EQ(o->duration, 10min);
  s.requests = 0;
  EXPECT_EQ(s.to_options().status().field(), "requests");
}

// Regression (kept from the flags' parser): -r 0 quietly ran a closed loop, -r 1e12 filled 24 GB.
TEST(LoadSpec, ARateOutsideWhatCanBeScheduledNamesRate) {
  for (double r : {0.0, -1.0, 1e12}) {
    LoadSpec s = spec();
    s.rate = r;
    s.rate_given = true;
    EXPECT_EQ(s.to_options().status().field(), "rate_rps") << r;
  }
}

// Regression (a new user's trial): --body @x.json, curl's habit, sent "@x.json".
TEST(LoadSpec, ABodyNamingAFileWithCurlsAtSignPointsToBodyFile) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/x.json";
  { std::ofstream(file) << "{}"; }
  LoadSpec s = spec();
  s.body = "@" + file;
  auto o = s.to_options();
  ASSERT_FALSE(o);
  EXPECT_EQ(o.status().message(), "--body '@" + file +
                                      "' would send those characters, not the file; give "
                                      "--body-file " +
                                      file + " to send it");
  s.body = "@" + dir.path() + "/absent";  // no such file: a body that begins with '@'
  auto sent = s.to_options();
  ASSERT_TRUE(sent) << sent.status().message();
  EXPECT_EQ(sent->request.body, "@" + dir.path() + "/absent");
}

// Regression (a new user's trial): --zipf on a URL without {shipment} was ignored without a word.
TEST(LoadSpec, ZipfWithoutAShipmentPlaceholderIsRefused) {
  LoadSpec s = spec("http://127.0.0.1:8080/fast");
  s.zipf = 1.0;
  s.zipf_given = true;
  auto o = s.to_options();
  ASSERT_FALSE(o);
  EXPECT_EQ(o.status().field(), "zipf");
  EXPECT_NE(o.status().message().find("no request holds {shipment}"), std::string::npos);
  s.zipf = 0;
  EXPECT_NE(s.to_options().status().message().find("Zipf exponent 0"), std::string::npos)
      << "a bad exponent is named first";
  s.zipf = 1.0;
  for (const char* url : {"http://127.0.0.1:8080/tracking/{shipment}",
                          "http://127.0.0.1:8080/tracking?no={shipment}"}) {
    s.url = url;
    EXPECT_TRUE(s.to_options()) << url;
  }
  s.url = "http://127.0.0.1:8080/";
  s.mix = "GET /a=1,GET /tracking/{shipment}=1";
  EXPECT_TRUE(s.to_options()) << "a mix endpoint holds it";
}

// Regression (a new user's trial): -d 300us measured 0 requests, exit 0, verdict client.
TEST(LoadSpec, ADurationTooShortToMeasureIsRefused) {
  LoadSpec s = spec();
  s.duration_given = true;
  for (const char* d : {"1ns", "300us", "9.999ms"}) {
    s.duration = d;
    auto o = s.to_options();
    ASSERT_FALSE(o) << d;
    EXPECT_EQ(o.status().field(), "duration");
    EXPECT_NE(o.status().message().find(std::string(d) + " is too short to measure anything"),
              std::string::npos)
        << o.status().message();
    EXPECT_NE(o.status().message().find("at least 10ms"), std::string::npos);
  }
  s.duration = "10ms";
  EXPECT_TRUE(s.to_options()) << s.to_options().status().message();
}

// Regression (a new user's trial): -r 0.5 -d 1s scheduled nothing and passed --strict.
TEST(LoadSpec, ARateThatSchedulesNoRequestInTheDurationNamesRate) {
  LoadSpec s = spec();
  s.rate = 0.5;
  s.rate_given = true;
  s.duration = "1s";
  s.duration_given = true;
  EXPECT_EQ(s.to_options().status().field(), "rate_rps");
  s.duration = "2s";  // one request, every 2 s: enough
  EXPECT_TRUE(s.to_options()) << s.to_options().status().message();
}

TEST(LoadSpec, ConnectionsGivenWithARateCapThePool) {
  LoadSpec s = spec();
  s.rate = 2000;
  s.rate_given = true;
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->rate_rps, 2000);
  EXPECT_FALSE(o->max_connections) << "left to the engine's default for the rate";
  s.connections = 7;
  s.connections_given = true;
  o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->max_connections, 7);
}

TEST(LoadSpec, EachBadValueNamesItsField) {
  const std::vector<std::pair<const char*, void (*)(LoadSpec&)>> cases = {
      {"duration", [](LoadSpec& s) { s.duration = "soon"; }},
      {"warmup", [](LoadSpec& s) { s.warmup = "x"; }},
      {"timeout", [](LoadSpec& s) { s.timeout = "0"; }},
      {"grace", [](LoadSpec& s) { s.grace = "later"; }},
      {"arrival", [](LoadSpec& s) { s.arrival = "bursty"; }},
      {"spin", [](LoadSpec& s) { s.spin = "fast"; }},
      {"shipments", [](LoadSpec& s) { s.shipments = "many"; }},
      {"streams", [](LoadSpec& s) { s.streams = 4; }},
      {"pipeline", [](LoadSpec& s) { s.pipeline = 0; }},
      {"h2", [](LoadSpec& s) { s.h2 = true; }},
      {"tls",
       [](LoadSpec& s) {
         s.url = "https://127.0.0.1/";
         s.tls_version = "1.1";
       }},
      {"stages",
       [](LoadSpec& s) {
         s.stages = "10s:100";
         s.duration_given = true;
       }},
      {"warmup",
       [](LoadSpec& s) {
         s.stages = "2s:100";
         s.warmup = "2s";
         s.warmup_given = true;
       }},
  };
  for (const auto& [field, spoil] : cases) {
    LoadSpec s = spec();
    spoil(s);
    auto o = s.to_options();
    ASSERT_FALSE(o) << field;
    EXPECT_EQ(o.status().field(), field) << o.status().message();
  }
}

TEST(LoadSpec, ErrorsThatTellWhatToTypeQuoteTheFlags) {
  LoadSpec s = spec();
  s.body = "a";
  s.body_file = "b";
  EXPECT_NE(s.to_options().status().message().find("--body and --body-file"), std::string::npos);
  s = spec("https://127.0.0.1/");
  s.insecure = true;
  s.cacert = "ca.pem";
  EXPECT_NE(s.to_options().status().message().find("-k/--insecure and --cacert"),
            std::string::npos);
  s = spec();  // a TLS option for a plain http:// target
  s.cacert = "ca.pem";
  EXPECT_NE(s.to_options().status().message().find("--cacert: only for https://"),
            std::string::npos);
  s = spec();
  s.body_file = "/nonexistent/body.json";
  auto o = s.to_options();
  ASSERT_FALSE(o);
  EXPECT_EQ(o.status().code(), core::Status::Code::kInvalidArgument);
  EXPECT_NE(o.status().message().find("--body-file"), std::string::npos) << o.status().message();
}

TEST(LoadSpec, OneHttp2FlagForEachScheme) {
  LoadSpec s = spec("https://127.0.0.1/");
  s.h2 = true;
  s.h2c = true;
  EXPECT_EQ(s.to_options().status().field(), "h2") << "both at once";
  s.h2 = false;
  EXPECT_EQ(s.to_options().status().field(), "h2") << "--h2c is cleartext, not https";
  s = spec("https://127.0.0.1/");
  s.h2 = true;
  s.streams = 8;
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_TRUE(o->h2);
  EXPECT_EQ(o->per_connection, 8);
}

TEST(LoadSpec, StagesSetThePeakRateAndTheMeasuredPhaseIsTheirTotalLessTheWarmup) {
  LoadSpec s = spec();
  s.stages = "2s:100,3s:400";
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_TRUE(s.open_loop());
  EXPECT_EQ(o->rate_rps, 400);
  EXPECT_EQ(o->warmup, 0s) << "no warm-up unless asked: the stages shape the whole run";
  EXPECT_EQ(o->duration, 5s);
  EXPECT_EQ(o->interval, 1s);
  s.warmup = "1s";
  s.warmup_given = true;
  o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->duration, 4s);
  EXPECT_FALSE(o->max_connections);
  s.connections = 6;
  s.connections_given = true;
  o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->max_connections, 6) << "-c caps the stages' pool";
  s.stages = "2s-100";
  EXPECT_EQ(s.to_options().status().field(), "stages");
}

// Regression (a new user's trial): stages that intend no request after the warm-up ran (1ns:100
// printed 139.70 GiB/s and 0 req/s), where -r 100 -d 1ms is refused.
TEST(LoadSpec, StagesThatIntendNoMeasuredRequestAreRefused) {
  LoadSpec s = spec();
  for (const char* stages : {"1ns:100", "5ms:100"}) {  // 5e-8 and 0.25 intended requests
    s.stages = stages;
    auto o = s.to_options();
    ASSERT_FALSE(o) << stages;
    EXPECT_EQ(o.status().field(), "stages");
    EXPECT_NE(o.status().message().find("fewer than one"), std::string::npos)
        << o.status().message();
  }
  s.stages = "500ms:100";  // 25 requests: 0 -> 100 req/s over 0.5 s
  EXPECT_TRUE(s.to_options());
  s.warmup = "499ms";
  s.warmup_given = true;  // leaves 0.1 of a request to measure
  EXPECT_EQ(s.to_options().status().field(), "stages");
}

TEST(LoadSpec, AMixOfRatesIsAnOpenLoopAtTheirSum) {
  LoadSpec s = spec("http://127.0.0.1:8080/");  // --mix names the targets
  s.mix = "GET /a=30/s,GET /b=10/s";
  EXPECT_TRUE(s.open_loop());
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->rate_rps, 40);
  ASSERT_EQ(o->mix.size(), 2u);
  EXPECT_EQ(o->mix[1].request.url.target, "/b");
  // With --stages (as with -r) the stages set the rate and the rates are its proportions, as
  // --mix's help says.
  s.stages = "2s:100";
  o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->rate_rps, 100) << "the stages' peak, not the mix's sum";
  ASSERT_EQ(o->mix.size(), 2u);
  EXPECT_EQ(o->mix[0].weight, 30);
  s.stages.clear();
  s.mix = "GET /a=3,GET /b=1";
  EXPECT_FALSE(s.open_loop()) << "ratios keep the closed loop";
  o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_FALSE(o->rate_rps);
  s.method = "POST";
  EXPECT_NE(s.to_options().status().message().find("--mix with -m"), std::string::npos)
      << "each endpoint names its own method";
}

TEST(LoadSpec, AMixRefusesAUrlWithATargetOfItsOwnRatherThanDropIt) {
  LoadSpec s = spec();
  s.url = "http://127.0.0.1:8080/api?v=2";
  s.mix = "GET /a=1";
  auto o = s.to_options();
  ASSERT_FALSE(o) << "the URL's target would not be sent";
  EXPECT_EQ(o.status().field(), "mix");
  EXPECT_NE(o.status().message().find("'/api?v=2'"), std::string::npos) << o.status().message();
  EXPECT_NE(o.status().message().find("http://127.0.0.1:8080/"), std::string::npos)
      << o.status().message();
  for (const char* bare : {"http://127.0.0.1:8080/", "http://127.0.0.1:8080"}) {
    s.url = bare;
    EXPECT_TRUE(s.to_options()) << bare;
  }
}

TEST(LoadSpec, AMixEndpointKeepsTheHeadersAndAJsonBodyIsTypedUnlessAHeaderNamesTheType) {
  testing::TempDir dir;
  const std::string body = dir.path() + "/event.json";
  std::ofstream(body) << R"({"id":"{shipment}"})";
  LoadSpec s = spec("http://127.0.0.1:8080/");  // --mix names the targets
  s.headers = {"X-Trace: 1"};
  s.mix = "POST /events @" + body + "=1,GET /a=1";
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  ASSERT_EQ(o->mix.size(), 2u);
  const auto& post = o->mix[0].request;
  EXPECT_EQ(post.method, "POST");
  EXPECT_EQ(post.body, R"({"id":"{shipment}"})");
  const std::vector<std::pair<std::string, std::string>> typed = {
      {"X-Trace", "1"}, {"Content-Type", "application/json"}};
  EXPECT_EQ(post.headers, typed);
  EXPECT_EQ(o->mix[1].request.headers.size(), 1u) << "no body, no type";
  s.headers.push_back("content-type: text/plain");
  o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  EXPECT_EQ(o->mix[0].request.headers.size(), 2u) << "the type the user named stays alone";
}

TEST(LoadSpec, ASweepPlanHasOneLevelPerConcurrencyAndTheLargestSetsConnections) {
  LoadSpec s = spec("http://127.0.0.1:8080/");  // --mix names the targets
  auto plan = s.to_sweep_plan({1, 4, 16}, /*by_rate=*/false, std::nullopt, /*repeats=*/2);
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(s.connections, 16);
  ASSERT_EQ(plan->levels.size(), 3u);
  EXPECT_EQ(plan->levels[1][0].connections, 4);
  s.mix = "GET /a=30/s";
  EXPECT_EQ(s.to_sweep_plan({1, 2}, false, std::nullopt, 1).status().field(), "mix")
      << "rates make an open loop; a closed sweep is refused";
}

TEST(LoadSpec, ARateSweepsPoolIsTheCapGivenElseTheEnginesDefaultForTheLargestRate) {
  LoadSpec s = spec();
  auto plan = s.to_sweep_plan({100, 4000}, /*by_rate=*/true, std::nullopt, 1);
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(s.connections, LoadOptions::default_pool_size(4000));
  ASSERT_EQ(plan->levels.size(), 2u);
  EXPECT_EQ(plan->levels[0][0].rate_rps, 100);
  s = spec();
  plan = s.to_sweep_plan({100, 4000}, true, 12, 1);
  ASSERT_TRUE(plan) << plan.status().message();
  EXPECT_EQ(s.connections, 12);
  EXPECT_EQ(plan->levels[1][0].max_connections, 12);
  s = spec();
  EXPECT_EQ(s.to_sweep_plan({0}, false, std::nullopt, 1).status().field(), "levels")
      << "a level's connections are the levels' to fix";
  s.threads = 8;
  EXPECT_EQ(s.to_sweep_plan({1, 4}, false, std::nullopt, 1).status().field(), "threads")
      << "more threads than the largest level's connections";
}

TEST(LoadSpec, APartIsIndexSlashCount) {
  LoadSpec s = spec();
  s.connections = 8;
  auto o = s.to_options();
  ASSERT_TRUE(o) << o.status().message();
  Plan plan;
  plan.levels = {{*o}};
  constexpr double kNow = 1.8e9;
  s.part = "1/2";
  ASSERT_TRUE(s.part_options(plan, kNow));
  EXPECT_EQ(plan.levels[0][0].connections, 4);
  EXPECT_FALSE(plan.start_at_epoch_s);
  for (const char* bad : {"1", "1/2x", "a/b", "1-2", "2/2", "0/0"}) {
    Plan whole;
    whole.levels = {{*o}};
    s.part = bad;
    EXPECT_EQ(s.part_options(whole, kNow).field(), "part") << bad;
  }
  s.part.clear();
  s.start_at = "yesterday-ish";
  EXPECT_EQ(s.part_options(plan, kNow).field(), "start_at");
  s.start_at = "+30s";
  ASSERT_TRUE(s.part_options(plan, kNow));
  EXPECT_EQ(plan.start_at_epoch_s, kNow + 30) << "from the time passed in, not the clock";
}

TEST(LoadSpec, AHeaderIsNameColonValue) {
  auto h = parse_header("X-Trace:   abc d");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->first, "X-Trace");
  EXPECT_EQ(h->second, "abc d");
  h = parse_header("X-Tab:\t\tv");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->second, "v");
  EXPECT_FALSE(parse_header("no colon"));
  EXPECT_FALSE(parse_header(": empty name"));
}

}  // namespace
}  // namespace knee::engine
