// knee: measures latency and throughput honestly. Parses, dispatches to a subcommand, exits.
#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/app.h"

int main(int argc, char** argv) {
  const std::unique_ptr<knee::cli::KneeApp> knee_app = knee::cli::make_app();
  CLI::App& app = knee_app->cli;
  const std::vector<CLI::App*>& subs = knee_app->subs;
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
    if (subs[i]->parsed()) return knee_app->commands[i]->run();
  }
  return knee::cli::kExitBadInput;
}
