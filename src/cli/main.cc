// knee: measures latency and throughput honestly. Parses, dispatches to a subcommand, exits.
#include <memory>
#include <vector>

#include "cli/app.h"
#include "cli/command.h"
#include "cli/parse_errors.h"

int main(int argc, char** argv) {
  const std::unique_ptr<knee::cli::KneeApp> knee_app = knee::cli::make_app();
  CLI::App& app = knee_app->cli;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return knee::cli::report_parse_error(e, *knee_app, argc, argv);
  }
  const std::vector<CLI::App*>& subs = knee_app->subs;
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i]->parsed()) return knee_app->commands[i]->run();
  }
  return knee::cli::kExitBadInput;
}
