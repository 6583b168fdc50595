// knee: measures latency and throughput honestly. Parses, dispatches to a subcommand, exits.
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "cli/command.h"

namespace {

struct Entry {
  const char* name;
  const char* help;
  std::unique_ptr<knee::cli::Subcommand> (*make)();
};

constexpr Entry kCommands[] = {
    {"sweep",
     "Measure a server across concurrency levels: table, knee, Little's law (the main job)",
     knee::cli::make_sweep_command},
    {"run", "One load test: closed loop with -c connections, full latency distribution",
     knee::cli::make_run_command},
    {"serve", "The lab server: lab endpoints and the tracking service",
     knee::cli::make_serve_command},
    {"report",
     "Read saved results: percentiles of HdrHistogram logs (.hlog), two JSON results side by side",
     knee::cli::make_report_command},
    {"model", "Queueing calculator: Little's law, M/M/1 table and peak headroom, M/M/c, USL fit",
     knee::cli::make_model_command},
    {"capacity", "Highest open-loop rate meeting an SLO (p99<50ms) with no errors: bracket, bisect",
     knee::cli::make_capacity_command},
    {"ladder", "Latency numbers of this host, measured rung by rung (ns to tens of ms), in context",
     knee::cli::make_ladder_command},
    {"lab",
     "The course's lab on this host: the shipment service's data set (knee lab data) and its "
     "batch flow (knee lab billing)",
     knee::cli::make_lab_command},
    {"probe", "Phases of one request (DNS, connect, TLS, first byte, total) like curl -w, repeated",
     knee::cli::make_probe_command},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"knee: finds where a server saturates, and says which resource did it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "knee 0.1.0");
  std::vector<std::unique_ptr<knee::cli::Subcommand>> commands;
  std::vector<CLI::App*> subs;
  for (const Entry& e : kCommands) {
    commands.push_back(e.make());
    subs.push_back(app.add_subcommand(e.name, e.help));
    commands.back()->add_options(*subs.back());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      fmt::print(
          stderr,
          "knee: unknown command '{}'; use one of sweep, run, serve, report, model, capacity, "
          "ladder, probe, lab\n",
          argv[1]);
      return knee::cli::kExitBadInput;
    }
    fmt::print(stderr, "knee: {}\nRun 'knee --help' for the accepted options.\n", e.what());
    return knee::cli::kExitBadInput;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "knee: {}\nRun 'knee {}--help' for the accepted options.\n", e.what(),
               [&]() -> std::string {
                 // The deepest subcommand parsed: "lab data ", "model usl ".
                 // Regression: `knee lab data --days 2.5` pointed to 'knee lab --help'.
                 std::string path;
                 for (CLI::App* s : subs) {
                   if (!s->parsed()) continue;
                   path = s->get_name() + " ";
                   for (CLI::App* sub = s; sub != nullptr;) {
                     CLI::App* next = nullptr;
                     for (CLI::App* child : sub->get_subcommands()) next = child;
                     if (next != nullptr) path += next->get_name() + " ";
                     sub = next;
                   }
                 }
                 return path;
               }());
    return knee::cli::kExitBadInput;
  }
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i]->parsed()) return commands[i]->run();
  }
  return knee::cli::kExitBadInput;
}
