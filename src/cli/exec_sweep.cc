#include "cli/exec_sweep.h"

#include <fmt/core.h>

#include <set>

#include "cli/command.h"
#include "cli/interrupt.h"
#include "core/units.h"
#include "engine/external.h"
#include "probes/host_context.h"
#include "probes/ladder.h"
#include "report/external.h"

namespace knee::cli {
namespace {

using core::Status;

// The flags an exec sweep reads; any other given is an HTTP sweep's and refused.
const std::set<std::string> kExecFlags = {"--exec",       "--adapter",      "--levels",  "--repeat",
                                          "--timeout",    "--sample-every", "--json",    "--html",
                                          "--server-pid", "--quiet",        "--no-color"};

Status check_flags(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0) continue;
    const std::string name = o->get_name(false, true);
    std::string flag;
    for (const std::string& n : o->get_lnames()) flag = "--" + n;
    if (flag.empty()) flag = name;
    if (kExecFlags.contains(flag)) continue;
    if (flag == "--help" || flag == "--help-all") continue;
    if (o->get_lnames().empty() && o->get_snames().empty()) {  // the positional URL
      return Status::invalid_argument(
          "a URL and --exec: give one; --exec sweeps the command, which names its own target");
    }
    return Status::invalid_argument(fmt::format(
        "{}: not with --exec, whose command sets its own load (with --exec: --levels, --repeat, "
        "--timeout, --sample-every, --json, --html, --server-pid, --adapter)",
        flag));
  }
  return Status::success();
}

}  // namespace

void ExecSweepFlags::add_to(CLI::App& app) {
  app.add_option("--exec", command,
                 "Sweep an external benchmark instead of HTTP: run this command once per level "
                 "and repeat with {N} replaced by the level (e.g. 'fio ... --iodepth={N} "
                 "--output-format=json'), sampling the host while it runs; --timeout is then per "
                 "run of the command (default 10m)");
  app.add_option("--adapter", adapter,
                 "With --exec: how to read the command's output (default by its first word: fio, "
                 "pgbench, redis-benchmark; else json, one JSON object with \"throughput\")")
      ->check(CLI::IsMember({"fio", "pgbench", "redis-benchmark", "json"}));
}

int run_exec_sweep(const ExecSweepFlags& flags, const ExecSweepContext& context) {
  if (Status s = check_flags(*context.app); !s) return report_failure(s);
  if (Status s = engine::check_template(flags.command); !s) {
    return report_failure(s.with_context("--exec"));
  }
  auto levels = core::parse_increasing_int_list(context.levels, 1'000'000);
  if (!levels) return report_failure(levels.status().with_context("--levels"));
  engine::ExternalSweepSpec spec;
  spec.command_template = flags.command;
  spec.adapter = flags.adapter.empty() ? engine::adapter_for(flags.command)
                                       : *engine::adapter_named(flags.adapter);
  for (int64_t l : *levels) spec.levels.push_back(static_cast<int>(l));
  spec.repeats = context.repeats;
  if (!context.timeout.empty()) {
    auto timeout = core::parse_duration(context.timeout);
    if (!timeout || timeout->count() <= 0) {
      return report_failure(Status::invalid_argument(
          "--timeout: give how long one run of the command may take, e.g. 90s or 10m"));
    }
    spec.timeout = *timeout;
  }
  auto sample_every = core::parse_duration(context.sample_every);
  if (!sample_every || *sample_every < std::chrono::milliseconds(10)) {
    return report_failure(
        Status::invalid_argument("--sample-every: give a duration of at least 10ms, e.g. 250ms"));
  }
  auto watched = context.target->resolve();
  if (!watched) return report_failure(watched.status());
  ResultFiles files;
  if (Status s = files.open(*context.outputs); !s) return report_failure(s);

  HostObserver observer(std::move(watched->processes), std::nullopt,
                        std::chrono::duration_cast<std::chrono::milliseconds>(*sample_every));
  Progress progress(*context.progress);
  const std::string level_name = report::level_name_of(flags.command);
  progress.print_line(fmt::format("sweeping `{}` ({} adapter) over {} {}, {} run{} each",
                                  flags.command, engine::to_text(spec.adapter), level_name,
                                  context.levels, spec.repeats, spec.repeats == 1 ? "" : "s"));
  engine::ExternalSweepControl control;
  control.interrupt = &install_interrupt_handler();
  control.observer = &observer;
  control.on_run_start = [&](int level, int repeat, const std::string& command) {
    progress.print_line(fmt::format(
        "{} {}{}: {}", level_name, level,
        spec.repeats > 1 ? fmt::format(" run {}/{}", repeat + 1, spec.repeats) : "", command));
  };
  control.on_run_done = [&](const core::ExternalRun& run) {
    progress.print_line("  " + report::external_live_line(level_name, run));
  };
  const std::string started_at = now_iso8601();
  engine::ExternalSweepResult result = engine::run_external_sweep(spec, control);
  progress.finish();

  report::ExternalSweepSetup setup;
  setup.command = flags.command;
  setup.adapter = std::string(engine::to_text(spec.adapter));
  setup.started_at = started_at;
  setup.repeats = spec.repeats;
  setup.timeout_s = std::chrono::duration<double>(spec.timeout).count();
  setup.interrupted = result.interrupted;
  if (!result.error) setup.failed = result.error.message();
  if (!result.levels.empty() && !result.levels.front().empty()) {
    if (auto disk =
            probes::disk_behind(probes::FsReader(), result.levels.front().front().measured.files)) {
      if (!disk->device.empty()) setup.device = disk->device;
      setup.fs_type = disk->fs_type;
      setup.files_in_memory = disk->memory;
    }
  }
  if (result.levels.empty() && !result.error) return report_failure(result.error);
  if (result.levels.empty() && result.interrupted) {
    fmt::print(stderr, "knee: interrupted before the first level finished: nothing measured\n");
    return kExitInterrupted;
  }
  const report::ExternalSweepDocument doc = report::analyse_external_sweep(
      std::move(setup), result.levels, probes::read_host_context(probes::FsReader()));
  if (Status s = files.write(doc, report::render_external_sweep_text(doc)); !s) {
    return report_failure(s);
  }
  if (!result.error) {
    fmt::print(stderr, "knee: {}\n", result.error.message());
    return kExitRunFailed;
  }
  return result.interrupted ? kExitInterrupted : kExitOk;
}

}  // namespace knee::cli
