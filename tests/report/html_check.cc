// html_check DOM.html FIXTURE.json [FIXTURE_B.json]: checks the self-check that web/report.js
// wrote into <pre id="knee-selftest"> of a report as Chromium rendered it (--dump-dom), against
// what the knee JSON the report was made from says every chart must hold (one fixture: its
// run or sweep report; two: their compare page). Run by html_browser_test.sh.
//
// Expected per chart, computed here from the fixture, independently of report/html.cc:
//   sweep:   throughput [levels, kUslCurvePoints when usl], latency [levels, levels],
//            little [levels, levels], spectrum [points of each level's spectrum] per level,
//            over_time [intervals, intervals with responses], cpu [levels with each figure];
//            the knee mark on throughput, latency and cpu, one resource label per level on cpu
//   run:     spectrum [points of its spectrum], over_time [intervals, intervals with responses]
//   compare: throughput and p99 [levels of A, levels of B, then A's levels with repeats twice
//            (the max and min edges of its band) and B's]
// Prints one line per chart with its point counts; exit 0 when everything matches and no error
// was caught, 1 otherwise.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/html.h"

namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string unescape_html(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    static const std::pair<const char*, char> kEntities[] = {
        {"&quot;", '"'}, {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&#39;", '\''}};
    bool matched = false;
    for (const auto& [name, c] : kEntities) {
      if (s.compare(i, std::string(name).size(), name) == 0) {
        out += c;
        i += std::string(name).size() - 1;
        matched = true;
        break;
      }
    }
    if (!matched) out += '&';
  }
  return out;
}

struct Expected {
  std::string id;
  std::vector<size_t> points;  // per series
  size_t min_marks = 0;
  size_t labels = 0;  // 0: not checked
};

size_t count_if_number(const json& levels, const std::vector<std::string>& path, double scale = 1) {
  size_t n = 0;
  for (const json& l : levels) {
    const json* j = &l;
    for (const std::string& k : path) {
      if (!j->is_object() || !j->contains(k)) {
        j = nullptr;
        break;
      }
      j = &(*j)[k];
    }
    if (j && j->is_number() && scale != 0) ++n;
  }
  return n;
}

void add_run_charts(const std::vector<const json*>& runs, std::vector<Expected>& want) {
  Expected spectrum{"spectrum", {}, 0, 0};
  size_t intervals = 0, with_responses = 0;
  for (const json* r : runs) {
    spectrum.points.push_back((*r)["spectrum"].size());
    for (const json& i : (*r)["intervals"]) {
      ++intervals;
      if (i["responses"].get<double>() > 0) ++with_responses;
    }
  }
  want.push_back(spectrum);
  if (intervals > 0) want.push_back({"over_time", {intervals, with_responses}, 0, 0});
}

std::vector<Expected> expected_of(const json& doc) {
  std::vector<Expected> want;
  if (doc["kind"] == "run") {
    add_run_charts({&doc}, want);
    return want;
  }
  const json& levels = doc["levels"];
  const size_t n = levels.size();
  const size_t knee_marks = doc["knee"]["index"].is_null() ? 0 : 1;
  Expected throughput{"throughput", {n}, knee_marks, 0};
  if (!doc["usl"].is_null()) throughput.points.push_back(knee::report::kUslCurvePoints);
  want.push_back(throughput);
  want.push_back({"latency", {n, n}, knee_marks, 0});
  want.push_back({"little", {n, n}, 0, 0});
  std::vector<const json*> runs;
  for (const json& l : levels) runs.push_back(&l);
  add_run_charts(runs, want);
  Expected cpu{"cpu", {}, knee_marks, 0};
  for (const auto& path :
       std::vector<std::vector<std::string>>{{"resources", "server", "cpu_pct"},
                                             {"client_max_thread_cpu_demand"},
                                             {"resources", "cpu_busy_all_pct"}}) {
    if (size_t c = count_if_number(levels, path); c > 0) cpu.points.push_back(c);
  }
  for (const json& l : levels) {
    if (l["saturated"].is_object()) ++cpu.labels;
  }
  want.push_back(cpu);
  return want;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: html_check DOM.html FIXTURE.json [FIXTURE_B.json]\n";
    return 2;
  }
  const std::string dom = read_file(argv[1]);
  const std::string open_tag = "<pre id=\"knee-selftest\"";
  size_t at = dom.find(open_tag);
  if (at == std::string::npos || (at = dom.find('>', at)) == std::string::npos) {
    std::cerr << "FAIL: no <pre id=\"knee-selftest\"> in " << argv[1] << "\n";
    return 1;
  }
  const size_t end = dom.find("</pre>", at);
  const json got = json::parse(unescape_html(dom.substr(at + 1, end - at - 1)), nullptr, false);
  if (got.is_discarded() || !got.contains("charts")) {
    std::cerr << "FAIL: the self-check is empty or not JSON: report.js did not finish\n";
    return 1;
  }
  std::vector<Expected> want;
  if (argc == 4) {
    const json a = json::parse(read_file(argv[2]));
    const json b = json::parse(read_file(argv[3]));
    // The medians of A and B, then the max and min edges of each side's band of repeats.
    auto banded = [](const json& d) {
      size_t n = 0;
      for (const json& l : d["levels"]) n += l.value("repeats", 1) > 1 ? 1u : 0u;
      return n;
    };
    const size_t na = a["levels"].size(), nb = b["levels"].size();
    const size_t ba = banded(a), bb = banded(b);
    want.push_back({"throughput", {na, nb, ba, ba, bb, bb}, 0, 0});
    want.push_back({"p99", {na, nb, ba, ba, bb, bb}, 0, 0});
  } else {
    want = expected_of(json::parse(read_file(argv[2])));
  }
  bool ok = true;
  for (const json& e : got["errors"]) {
    std::cerr << "FAIL: caught in the page: " << e.get<std::string>() << "\n";
    ok = false;
  }
  if (got["charts"].size() != want.size()) {
    std::cerr << fmt::format("FAIL: {} charts drawn, {} expected\n", got["charts"].size(),
                             want.size());
    ok = false;
  }
  for (const Expected& w : want) {
    const json* chart = nullptr;
    for (const json& c : got["charts"]) {
      if (c.value("id", "") == w.id) chart = &c;
    }
    if (!chart || !chart->contains("series")) {
      std::cerr << "FAIL: chart " << w.id << " was not drawn\n";
      ok = false;
      continue;
    }
    std::vector<size_t> points;
    for (const json& s : (*chart)["series"]) points.push_back(s["points"].get<size_t>());
    const size_t marks = chart->value("marks", size_t{0});
    const size_t labels = chart->value("labels", size_t{0});
    const bool match = points == w.points && marks >= w.min_marks &&
                       (w.labels == 0 || labels == w.labels) && chart->value("width", 0) > 0 &&
                       chart->value("height", 0) > 0;
    std::cout << fmt::format("{} {}: series points [{}] (expected [{}]), marks {}, labels {}\n",
                             match ? "ok  " : "FAIL", w.id, fmt::join(points, ", "),
                             fmt::join(w.points, ", "), marks, labels);
    ok = ok && match;
  }
  std::cout << (ok ? "html_check: all charts drawn as expected\n" : "html_check: FAILED\n");
  return ok ? 0 : 1;
}
