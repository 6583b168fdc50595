// `knee probe URL`: the phases of one request (DNS lookup, TCP connect, TLS, request sent, first
// byte, complete), repeated -n times, with min, median and p99 per phase. Times are cumulative
// from each attempt's start, like curl's --write-out timers (engine/probe.h), so the columns
// compare one to one with `curl -w '%{time_namelookup} %{time_connect} ...'`.
#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/load_flags.h"
#include "core/units.h"
#include "engine/probe.h"
#include "http/url.h"

namespace knee::cli {
namespace {

using core::Status;
using engine::ProbePhase;
using nlohmann::json;

constexpr ProbePhase kPhases[] = {
    ProbePhase::kNameLookup,  ProbePhase::kConnect,      ProbePhase::kAppConnect,
    ProbePhase::kPreTransfer, ProbePhase::kPostTransfer, ProbePhase::kStartTransfer,
    ProbePhase::kTotal,
};

std::string ms(int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns) / 1e6); }

class ProbeCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("url", url_, "Target URL, http://HOST[:PORT]/PATH (https: not yet, no TLS)")
        ->required();
    app.add_option("-n,--count", count_, "Attempts, one request at a time")->capture_default_str();
    app.add_flag("--reuse", reuse_,
                 "Send every attempt on one keep-alive connection: DNS lookup and TCP connect "
                 "happen only on the attempt that opens it (default: a new connection each)");
    app.add_option("--timeout", timeout_, "Per attempt, from its start to the response's last byte")
        ->capture_default_str();
    app.add_option("-m,--method", method_, "HTTP method")->capture_default_str();
    app.add_option("-H,--header", headers_, "Request header 'Name: value' (repeatable)");
    app.add_flag("--json", json_,
                 "Print every attempt and the phase statistics as JSON on stdout (fields in "
                 "docs/output.md)");
    app.footer(
        "Times are cumulative from the start of each attempt, as curl -w reports them: "
        "time_namelookup (DNS done) <= time_connect (TCP connected) <= time_pretransfer (about "
        "to send) <= time_posttransfer (request sent) <= time_starttransfer (first byte) <= "
        "time_total (complete). The 'phase' column is the median of one phase alone (the "
        "difference from the previous measured phase). Min, median and p99 are over the "
        "successful attempts, from knee's HDR histogram (ns, 3 significant digits). A failed "
        "attempt (refused, closed early, not HTTP, timeout) is counted with its cause. Exit 0 "
        "when at least one attempt completed; 1 when none did or the target cannot be reached "
        "(the message names the URL and the OS error); 2 for bad input.");
  }

  int run() override {
    auto options = to_options();
    if (!options) return report_failure(options.status());
    const std::string started_at = now_iso8601();
    auto result = engine::run_probe(*options);
    if (!result) return report_failure(result.status());
    if (json_) {
      fmt::print("{}\n", to_json(*options, *result, started_at).dump(2));
    } else {
      fmt::print("{}", render_text(*options, *result));
    }
    if (result->ok == 0) {
      fmt::print(stderr, "knee: probe {}: every attempt failed ({})\n", url_,
                 result->errors.begin()->first);
      return kExitRunFailed;
    }
    return kExitOk;
  }

 private:
  std::string url_;
  int count_ = 10;
  bool reuse_ = false;
  std::string timeout_ = "5s";
  std::string method_ = "GET";
  std::vector<std::string> headers_;
  bool json_ = false;

  core::Result<engine::ProbeOptions> to_options() const {
    engine::ProbeOptions o;
    auto url = http::parse_url(url_);
    if (!url) return url.status();
    o.request.url = *url;
    o.request.method = method_;
    for (const std::string& h : headers_) {
      auto header = parse_header(h);
      if (!header) return header.status();
      o.request.headers.push_back(std::move(header).value());
    }
    o.count = count_;
    o.reuse = reuse_;
    auto t = core::parse_duration(timeout_);
    if (!t) return Status::invalid_argument("--timeout: " + t.status().message());
    o.timeout = *t;
    if (Status s = o.validate(); !s) return s;
    return o;
  }

  static std::string render_text(const engine::ProbeOptions& o, const engine::ProbeResult& r) {
    std::string out =
        fmt::format("knee probe: {} {} ({}), {} attempt{}, {}\n", o.request.method,
                    o.request.url.to_string(), r.address, o.count, o.count == 1 ? "" : "s",
                    o.reuse ? "one keep-alive connection (--reuse)" : "a new connection each");
    out += fmt::format("{:43}{:>27}  {:>9}\n", "", "cumulative ms, like curl -w", "phase");
    out += fmt::format("{:<15}{:<20}{:>6}  {:>9}{:>9}{:>9}  {:>9}\n", "phase", "curl -w", "count",
                       "min", "median", "p99", "median");
    for (ProbePhase p : kPhases) {
      const engine::ProbePhaseStats& s = r.phases[static_cast<size_t>(p)];
      if (s.count == 0) {
        out += fmt::format("{:<15}{:<20}{:>6}  {:>9}{:>9}{:>9}  {:>9}{}\n",
                           engine::probe_phase_words(p), engine::probe_phase_curl_name(p), 0, "-",
                           "-", "-", "-", p == ProbePhase::kAppConnect ? "   (http: no TLS)" : "");
        continue;
      }
      out += fmt::format("{:<15}{:<20}{:>6}  {:>9}{:>9}{:>9}  {:>9}\n",
                         engine::probe_phase_words(p), engine::probe_phase_curl_name(p), s.count,
                         ms(s.min_ns), ms(s.median_ns), ms(s.p99_ns), ms(s.phase_median_ns));
    }
    std::string codes;
    for (const auto& [code, n] : r.status) {
      codes += fmt::format("{}{}: {}", codes.empty() ? "" : ", ", code, n);
    }
    out += fmt::format("{} of {} complete{}; {} failed; {} connection{} opened\n", r.ok,
                       r.attempts.size(), codes.empty() ? "" : " (status " + codes + ")", r.failed,
                       r.connections, r.connections == 1 ? "" : "s");
    for (const auto& [cause, n] : r.errors) out += fmt::format("  failed: {} x{}\n", cause, n);
    return out;
  }

  static json to_json(const engine::ProbeOptions& o, const engine::ProbeResult& r,
                      const std::string& started_at) {
    auto time_or_null = [](int64_t ns) { return ns == engine::kNotMeasured ? json() : json(ns); };
    json phases = json::object();
    for (ProbePhase p : kPhases) {
      const engine::ProbePhaseStats& s = r.phases[static_cast<size_t>(p)];
      json j = {{"curl", engine::probe_phase_curl_name(p)},
                {"words", engine::probe_phase_words(p)},
                {"count", s.count}};
      if (s.count > 0) {
        j["min_ns"] = s.min_ns;
        j["median_ns"] = s.median_ns;
        j["p99_ns"] = s.p99_ns;
        j["max_ns"] = s.max_ns;
        j["phase_min_ns"] = s.phase_min_ns;
        j["phase_median_ns"] = s.phase_median_ns;
        j["phase_p99_ns"] = s.phase_p99_ns;
      } else {
        for (const char* k : {"min_ns", "median_ns", "p99_ns", "max_ns", "phase_min_ns",
                              "phase_median_ns", "phase_p99_ns"}) {
          j[k] = nullptr;
        }
      }
      phases[engine::probe_phase_key(p)] = j;
    }
    json attempts = json::array();
    for (const engine::ProbeAttempt& a : r.attempts) {
      json j = {{"ok", a.ok},
                {"new_connection", a.new_connection},
                {"status", a.status_code == 0 ? json() : json(a.status_code)},
                {"body_bytes", a.body_bytes}};
      json at = json::object();
      for (ProbePhase p : kPhases) at[engine::probe_phase_key(p)] = time_or_null(a.at(p));
      j["at_ns"] = at;
      j["error"] = a.ok ? json() : json(a.error_kind + ": " + a.error_cause);
      attempts.push_back(j);
    }
    json status = json::object();
    for (const auto& [code, n] : r.status) status[std::to_string(code)] = n;
    json errors = json::object();
    for (const auto& [cause, n] : r.errors) errors[cause] = n;
    return json{
        {"schema_version", 1},
        {"kind", "probe"},
        {"target", o.request.url.to_string()},
        {"started_at", started_at},
        {"address", r.address},
        {"params",
         {{"method", o.request.method},
          {"count", o.count},
          {"reuse", o.reuse},
          {"timeout_s", std::chrono::duration<double>(o.timeout).count()}}},
        {"times", "cumulative from each attempt's start, as curl --write-out"},
        {"ok", r.ok},
        {"failed", r.failed},
        {"connections", r.connections},
        {"status", status},
        {"errors", errors},
        {"phases", phases},
        {"attempts", attempts},
    };
  }
};

}  // namespace

std::unique_ptr<Subcommand> make_probe_command() { return std::make_unique<ProbeCommand>(); }

}  // namespace knee::cli
