#include "cli/command.h"

namespace knee::cli {
namespace {
class Stub final : public Subcommand {
 public:
  void add_options(CLI::App&) override {}
  int run() override { return kExitRunFailed; }
};
}  // namespace
std::unique_ptr<Subcommand> make_run_command() { return std::make_unique<Stub>(); }
}  // namespace knee::cli
