// `knee model`: the queueing calculator of seed 000, four models as sub-subcommands:
//   knee model little  two of --n, --x, --r -> the third (Little's law)
//   knee model mm1     the seed's utilisation table and the headroom of planned peaks
//   knee model mmc     M/M/c: Erlang C, waits, queue lengths, response-time percentiles
//   knee model usl     the Universal Scalability Law fitted to measured (N, X) points
//   knee model sim     the Traffic Lab: an interactive simulation page (report/sim.h)
// The documents and their text come from report/queueing.h; this file declares the flags, reads
// files and prints. Text by default, --json for the document.
#include <fmt/core.h>

#include "analysis/queueing.h"
#include "cli/command.h"
#include "cli/model_sim.h"
#include "cli/output.h"
#include "core/units.h"
#include "report/queueing.h"
#include "report/render.h"

namespace knee::cli {
namespace {

using core::Result;
using core::Status;

// Prints the document as text or JSON; exit 0.
int print(const report::Document& doc, bool json) {
  fmt::print("{}", json ? json_text(doc) : report::render_text(doc));
  return kExitOk;
}

class ModelCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.footer(fmt::format(
        "Models, not measurements: each assumes Poisson arrivals and exponential service (M/M/*) "
        "or the USL's shape; they give the direction and size of ratios.\nSources: {}; {}; {}; "
        "USL: {}; Kneedle: {}.",
        report::kLittleSource, report::kMm1Source, report::kMmcSource, report::kUslSource,
        report::kKneedleSource));
    little_ = app.add_subcommand(
        "little", "Little's law N = X * R: give two of --n, --x, --r, get the third (Little 1961)");
    little_->add_option("--n", n_, "Requests in flight (the mean number in system)");
    little_->add_option("--x", x_rps_, "Throughput in req/s");
    little_->add_option("--r", r_, "Mean time in system, a duration like 15ms, 250us or 1.5s");
    std::string bands;
    for (const analysis::HeadroomBandInfo& b : analysis::kHeadroomBands) {
      bands += fmt::format("\n  {}: {}", b.range, b.verdict);
    }
    mm1_ = app.add_subcommand(
        "mm1",
        "M/M/1 (Gross et al., Fundamentals of Queueing Theory, 2.2): the seed's table of "
        "utilisation 30..99% -> mean time 1/(mu - lambda), ratio to 30%, percentiles "
        "-ln(1-p)/(mu - lambda); and the headroom of planned peaks");
    mm1_->add_option("--mu", mu_rps_, "Service rate in req/s (the measured upper bound)");
    mm1_->add_option("--from", from_,
                     "Take mu from a knee sweep JSON: the largest levels[].throughput_rps")
        ->type_name("FILE");
    mm1_->add_option("--peak", peak_,
                     "Planned peak rates in req/s, comma-separated (e.g. 416.67,833.33): "
                     "utilisation, headroom mu/peak, modelled mean time, verdict");
    mm1_->footer("Headroom bands (mu / peak):" + bands);
    mmc_ = app.add_subcommand(
        "mmc",
        "M/M/c (Gross et al., 2.3): P(wait) by Erlang C (recursion on Erlang B), Wq, W, Lq, L "
        "(Little), response-time percentiles from the exact distribution (bisection)");
    mmc_->add_option("--servers", servers_, "Servers c, an integer >= 1")
        ->required()
        ->check(CLI::Range(1, 1'000'000));
    mmc_->add_option("--mu", mmc_mu_rps_, "Service rate of one server in req/s")->required();
    mmc_->add_option("--lambda", lambda_rps_, "Arrival rate in req/s")->required();
    usl_ = app.add_subcommand(
        "usl",
        "Universal Scalability Law (Gunther; Schwartz) X(N) = lambda N / (1 + sigma (N-1) + kappa "
        "N (N-1)) fitted by nonlinear least squares (GSL, Levenberg-Marquardt); peak "
        "N* = sqrt((1 - sigma)/kappa); Kneedle (Satopaa et al. 2011) as a secondary knee");
    usl_->add_option("--points", points_,
                     "(N, X) points: a CSV with the header 'concurrency,throughput', or a knee "
                     "closed-loop sweep JSON")
        ->required()
        ->type_name("FILE");
    usl_->footer(
        "Flags: 'fit is weak' (fewer than 6 points), 'peak extrapolated' (N* beyond the largest "
        "measured level), 'no retrograde region' (kappa = 0).");
    sim_.add_to(app);
    for (CLI::App* sub : {little_, mm1_, mmc_, usl_}) {
      sub->add_flag("--json", json_, "Print the document as JSON (times in ns)");
    }
  }

  int run() override {
    if (little_->parsed()) return run_little();
    if (mm1_->parsed()) return run_mm1();
    if (mmc_->parsed()) return run_mmc();
    if (usl_->parsed()) return run_usl();
    if (sim_.parsed()) return sim_.run();
    return report_failure(Status::invalid_argument(
        "model: name a model: knee model little|mm1|mmc|usl|sim (see knee model --help)"));
  }

 private:
  CLI::App* little_ = nullptr;
  CLI::App* mm1_ = nullptr;
  CLI::App* mmc_ = nullptr;
  CLI::App* usl_ = nullptr;
  ModelSimFlags sim_;
  bool json_ = false;
  std::optional<double> n_, x_rps_, mu_rps_;
  std::optional<std::string> r_, from_, peak_;
  int servers_ = 0;
  double mmc_mu_rps_ = 0, lambda_rps_ = 0;
  std::string points_;

  int run_little() {
    std::optional<double> r_ns;
    if (r_) {
      Result<core::Nanos> r = core::parse_duration(*r_);
      if (!r) return report_failure(r.status().with_context("--r"));
      r_ns = static_cast<double>(r->count());
    }
    auto doc = report::little_document(n_, x_rps_, r_ns);
    if (!doc) return report_failure(doc.status());
    return print(*doc, json_);
  }

  int run_mm1() {
    if (mu_rps_.has_value() == from_.has_value()) {
      return report_failure(Status::invalid_argument(
          "model mm1: give the service rate with exactly one of --mu REQ_PER_S (e.g. --mu 4268) "
          "or --from SWEEP.json (mu = its largest measured throughput)"));
    }
    double mu = mu_rps_.value_or(0);
    report::MuSource source{"--mu", {}, {}, {}};
    if (mu_rps_ && !(std::isfinite(mu) && mu > 0)) {
      return report_failure(Status::invalid_argument(
          "--mu: give the service rate in req/s, a number > 0, e.g. 4268"));
    }
    if (from_) {
      Result<std::string> text = read_text_file("--from", *from_);
      if (!text) return report_failure(text.status());
      auto measured = report::mu_from_sweep(*from_, *text);
      if (!measured) return report_failure(measured.status());
      std::tie(mu, source) = *measured;
    }
    std::vector<double> peaks;
    if (peak_) {
      auto p = core::parse_positive_number_list(*peak_);
      if (!p) return report_failure(p.status().with_context("--peak"));
      peaks = *p;
    }
    auto doc = report::mm1_document(mu, source, peaks);
    if (!doc) return report_failure(doc.status());
    return print(*doc, json_);
  }

  int run_mmc() {
    if (!(std::isfinite(mmc_mu_rps_) && mmc_mu_rps_ > 0)) {
      return report_failure(Status::invalid_argument(
          "--mu: give the service rate of one server in req/s, a number > 0, e.g. 1000"));
    }
    if (!(std::isfinite(lambda_rps_) && lambda_rps_ >= 0)) {
      return report_failure(Status::invalid_argument(
          "--lambda: give the arrival rate in req/s, a number >= 0, e.g. 3500"));
    }
    auto doc = report::mmc_document(servers_, mmc_mu_rps_, lambda_rps_);
    if (!doc) return report_failure(doc.status());
    return print(*doc, json_);
  }

  int run_usl() {
    Result<std::string> text = read_text_file("--points", points_);
    if (!text) return report_failure(text.status());
    auto points = report::read_points("--points", points_, *text);
    if (!points) return report_failure(points.status());
    auto doc = report::usl_document(*points, points_);
    if (!doc) {
      if (doc.status().code() != Status::Code::kInvalidArgument) {
        return report_failure(doc.status());
      }
      return report_failure(doc.status().with_context(fmt::format("--points: '{}'", points_)));
    }
    return print(*doc, json_);
  }
};

}  // namespace

std::unique_ptr<Subcommand> make_model_command() { return std::make_unique<ModelCommand>(); }

}  // namespace knee::cli
