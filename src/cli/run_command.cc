// `knee run URL`: one closed-loop load test; a wrk-like summary or --json.
#include <fmt/core.h>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/load_flags.h"
#include "probes/host_context.h"
#include "report/render.h"

namespace knee::cli {
namespace {

class RunCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    flags_.add_to(app, /*url_required=*/true, /*with_connections=*/true);
    flags_.add_open_loop_to(app);
    app.add_flag("--strict", strict_,
                 "Open loop: exit 3 when the achieved rate is below 99% of the target");
    app.add_flag("--json", json_, "Print the result as JSON (fields in docs/output.md)");
  }

  int run() override {
    auto options = flags_.to_options();
    if (!options) return report_failure(options.status());
    engine::RunControl control;
    control.interrupt = &install_interrupt_handler();
    report::RunReport rep;
    rep.started_at = now_iso8601();
    auto result = engine::run_load(*options, control);
    if (!result) return report_failure(result.status());
    rep.target = flags_.url;
    rep.params = load_params(*options, flags_.url);
    rep.result = std::move(result).value();
    rep.little = report::little_of(rep.result);
    rep.host = probes::read_host_context(probes::FsReader());
    if (json_) {
      fmt::print("{}\n", report::run_to_json(rep).dump(2));
    } else {
      fmt::print("{}", report::render_run_text(rep));
    }
    if (rep.result.interrupted) return 130;
    if (strict_ && rep.result.open_loop() &&
        rep.result.achieved_rate_rps() < 0.99 * rep.result.target_rate_rps) {
      fmt::print(stderr, "knee: --strict: achieved {:.1f} req/s, below 99% of the target {:.1f}\n",
                 rep.result.achieved_rate_rps(), rep.result.target_rate_rps);
      return kExitThresholds;
    }
    return kExitOk;
  }

 private:
  LoadFlags flags_;
  bool json_ = false;
  bool strict_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace knee::cli
