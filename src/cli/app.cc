#include "cli/app.h"

#include "core/version.h"

namespace knee::cli {

namespace {

struct Entry {
  const char* name;
  const char* help;
  std::unique_ptr<Subcommand> (*make)();
};

constexpr Entry kCommands[] = {
    {"sweep",
     "Measure a server across concurrency levels: table, knee, Little's law (the main job)",
     make_sweep_command},
    {"run", "One load test: closed loop with -c connections, full latency distribution",
     make_run_command},
    {"serve", "The lab server: lab endpoints and the tracking service", make_serve_command},
    {"report",
     "Read saved results: percentiles of HdrHistogram logs (.hlog), two JSON results side by side",
     make_report_command},
    {"model", "Queueing calculator: Little's law, M/M/1 table and peak headroom, M/M/c, USL fit",
     make_model_command},
    {"capacity", "Highest open-loop rate meeting an SLO (p99<50ms) with no errors: bracket, bisect",
     make_capacity_command},
    {"ladder", "Latency numbers of this host, measured rung by rung (ns to tens of ms), in context",
     make_ladder_command},
    {"lab",
     "The course's lab on this host: the shipment service's data set (knee lab data) and its "
     "batch flow (knee lab billing)",
     make_lab_command},
    {"probe", "Phases of one request (DNS, connect, TLS, first byte, total) like curl -w, repeated",
     make_probe_command},
};

}  // namespace

std::unique_ptr<KneeApp> make_app() {
  auto app = std::make_unique<KneeApp>();
  app->cli.require_subcommand(1);
  app->cli.set_version_flag("--version", "knee " + core::version_string());
  for (const Entry& e : kCommands) {
    app->commands.push_back(e.make());
    app->subs.push_back(app->cli.add_subcommand(e.name, e.help));
    app->commands.back()->add_options(*app->subs.back());
  }
  return app;
}

}  // namespace knee::cli
