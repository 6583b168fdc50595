// Scenario texts (engine/scenario.h) over shared options: each key lands in its option, the seed
// differs per scenario, and a bad text is refused naming the scenario and the key.
#include "engine/scenario.h"

#include <gtest/gtest.h>

#include "http/url.h"

namespace knee::engine {
namespace {

using namespace std::chrono_literals;

LoadOptions shared() {
  LoadOptions o;
  o.request.url = *http::parse_url("http://127.0.0.1/");
  o.duration = 3s;
  o.request.headers = {{"X-Shared", "1"}};
  o.seed = 7;
  return o;
}

// Regression: c= was assigned to a temporary, so every scenario ran with 10 connections.
TEST(Scenario, EachKeySetsItsOption) {
  auto s = parse_scenarios({"name=fast url=http://127.0.0.1:8080/fast c=2 t=2 m=HEAD",
                            "name=paced url=http://127.0.0.1:8080/p r=50 c=3 arrival=poisson"},
                           shared());
  ASSERT_TRUE(s) << s.status().message();
  ASSERT_EQ(s->size(), 2u);
  const LoadOptions& fast = (*s)[0].options;
  EXPECT_EQ((*s)[0].name, "fast");
  EXPECT_EQ(fast.connections, 2);
  EXPECT_EQ(fast.threads, 2);
  EXPECT_EQ(fast.request.method, "HEAD");
  EXPECT_FALSE(fast.rate_rps);
  EXPECT_EQ(fast.request.url.target, "/fast");
  EXPECT_EQ(fast.duration, 3s) << "shared options apply";
  EXPECT_EQ(fast.request.headers.size(), 1u);
  const LoadOptions& paced = (*s)[1].options;
  EXPECT_EQ(paced.rate_rps, 50);
  EXPECT_EQ(paced.max_connections, 3);
  EXPECT_EQ(paced.arrival, Arrival::kPoisson);
  EXPECT_EQ(fast.seed, 7u);
  EXPECT_EQ(paced.seed, 8u) << "scenario i draws from seed + i";
}

TEST(Scenario, BadTextsAreRefusedNamingTheScenarioAndTheKey) {
  for (const auto& [text, words] : std::vector<std::pair<std::string, std::string>>{
           {"url=http://x/", "name= is missing"},
           {"name=a", "url= is missing"},
           {"name=a url=http://x/ c=0", "c=0 is not a whole number above 0"},
           {"name=a url=http://x/ q=1", "unknown key 'q'"},
           {"name=a url=http://x/ c=1 c=2", "key 'c' is given twice"},
           {"name=a url=http://x/ arrival=poisson", "arrival= needs r="},
           {"name=a url=http://x/ c=1 t=2",
            "t=: 2 must be between 1 and the number of connections"},
           {"name=a url=http://x/{bad}", "url=: unknown placeholder"}}) {
    auto s = parse_scenarios({text}, shared());
    ASSERT_FALSE(s) << text;
    EXPECT_NE(s.status().message().find(words), std::string::npos) << s.status().message();
    EXPECT_NE(s.status().message().find("--scenario '" + text + "'"), std::string::npos)
        << s.status().message();
  }
  auto twice = parse_scenarios({"name=a url=http://x/", "name=a url=http://y/"}, shared());
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.status().message().find("used by an earlier scenario"), std::string::npos);
}

}  // namespace
}  // namespace knee::engine
