// `knee probe URL`: the phases of one request (DNS lookup, TCP connect, TLS, request sent, first
// byte, complete), repeated -n times, with min, median and p99 per phase, cumulative like curl's
// --write-out timers (engine/request_phases.h measures, report/probe.h renders).
#include <fmt/core.h>

#include "cli/command.h"
#include "cli/load_flags.h"
#include "cli/output.h"
#include "core/units.h"
#include "engine/request_phases.h"
#include "http/url.h"
#include "report/probe.h"

namespace knee::cli {
namespace {

using core::Status;

class ProbeCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("url", url_, "Target URL, http[s]://HOST[:PORT]/PATH")->required();
    app.add_option("-n,--count", count_, "Attempts, one request at a time")->capture_default_str();
    app.add_flag("--reuse", reuse_,
                 "Send every attempt on one keep-alive connection: DNS lookup and TCP connect "
                 "happen only on the attempt that opens it (default: a new connection each)");
    app.add_option("--timeout", timeout_, "Per attempt, from its start to the response's last byte")
        ->capture_default_str();
    app.add_option("-m,--method", method_, "HTTP method")->capture_default_str();
    app.add_option("-H,--header", headers_, "Request header 'Name: value' (repeatable)");
    tls_flags_.add_tls_flags(app);
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
    engine::RequestPhasesOptions o;
    auto url = http::parse_url(url_);
    if (!url) return report_failure(url.status());
    o.request.url = *url;
    o.request.method = method_;
    for (const std::string& h : headers_) {
      auto header = parse_header(h);
      if (!header) return report_failure(header.status());
      o.request.headers.push_back(std::move(header).value());
    }
    if (Status s = tls_flags_.tls_options(&o.request.url, o.tls); !s) return report_failure(s);
    o.count = count_;
    o.reuse = reuse_;
    auto t = core::parse_duration(timeout_);
    if (!t) return report_failure(t.status().with_context("--timeout"));
    o.timeout = *t;
    if (Status s = o.validate(); !s) return report_failure(s);
    const std::string started_at = now_iso8601();
    auto result = engine::measure_request_phases(o);
    if (!result) return report_failure(result.status());
    const report::ProbeDocument doc = report::probe_document(
        o.request.url.to_string(),
        report::ProbeParams{o.request.method, o.count, o.reuse,
                            std::chrono::duration<double>(o.timeout).count()},
        *result, started_at);
    fmt::print("{}", json_ ? json_text(doc) : report::render_probe_text(doc));
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
  LoadFlags tls_flags_;  // only its TLS flags
};

}  // namespace

std::unique_ptr<Subcommand> make_probe_command() { return std::make_unique<ProbeCommand>(); }

}  // namespace knee::cli
