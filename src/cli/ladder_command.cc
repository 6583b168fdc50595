// `knee ladder`: latency numbers measured on this host, rung by rung, with the context that makes
// them true (seed 001). The measuring is probes/ladder.h, the network floor analysis/
// network_floor.h, the document and text report/ladder.h; this file declares the flags.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "analysis/network_floor.h"
#include "cli/command.h"
#include "cli/output.h"
#include "core/units.h"
#include "probes/ladder.h"
#include "report/ladder.h"

namespace knee::cli {
namespace {

using core::Result;
using core::Status;

class LadderCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("--dir", dir_,
                   "Directory for the durable-write rungs' file (default: current directory); on "
                   "a real disk, not tmpfs")
        ->capture_default_str()
        ->type_name("DIR");
    app.add_flag("--json", json_, "Print one JSON object on stdout instead of the ladder");
    app.add_option("--only", only_,
                   "Comma-separated groups to run: inprocess,sqlite,disk,loopback,network "
                   "(default: all)");
    app.add_option("--route", routes_,
                   "A network-floor route of your own, 'LAT,LON:LAT,LON' in decimal degrees "
                   "(repeatable), added after the seed's city pairs");
    app.add_option("--fibre-factor", fibre_factor_,
                   "Speed of light in fibre as a fraction of c, in (0, 1] (default 2/3)");
  }

  int run() override {
    auto only =
        core::parse_name_list(only_, {"inprocess", "sqlite", "disk", "loopback", "network"});
    if (!only) return report_failure(only.status().with_context("--only"));
    const bool network = std::find(only->begin(), only->end(), "network") != only->end();
    if (Status st = analysis::check_fibre_factor(fibre_factor_); !st) return report_failure(st);
    std::vector<analysis::Route> routes;
    if (network) routes = analysis::seed_routes();
    for (const std::string& text : routes_) {
      Result<analysis::Route> r = analysis::parse_route(text);
      if (!r) return report_failure(r.status());
      routes.push_back(std::move(*r));
    }
    if (!routes_.empty() && !network) {
      return report_failure(Status::invalid_argument(
          "--route: the network group is not in --only; add network to it"));
    }
    const std::string started_at = now_iso8601();
    const auto start = core::Clock::now();
    probes::LadderOptions options;
    options.dir = dir_;
    const bool progress = !json_ && ::isatty(STDERR_FILENO) == 1;
    auto run = probes::run_ladder(probes::FsReader(), options, *only, [&](const char* what) {
      if (progress) fmt::print(stderr, "knee ladder: measuring {}...\n", what);
    });
    if (!run) return report_failure(run.status());
    const report::LadderDocument doc =
        report::ladder_document(*run, routes, fibre_factor_, *only, started_at,
                                std::chrono::duration<double>(core::Clock::now() - start).count());
    fmt::print("{}", json_ ? json_text(doc) : report::render_ladder_text(doc));
    return kExitOk;
  }

 private:
  std::string dir_ = ".";
  bool json_ = false;
  std::string only_ = "inprocess,sqlite,disk,loopback,network";
  std::vector<std::string> routes_;
  double fibre_factor_ = analysis::kDefaultFibreFactor;
};

}  // namespace

std::unique_ptr<Subcommand> make_ladder_command() { return std::make_unique<LadderCommand>(); }

}  // namespace knee::cli
