// `knee sweep [URL]`: the main job. Runs closed-loop levels of concurrency against one target,
// prints the seed's table with X * mean R, marks the knee, checks Little's law. Without a URL it
// measures the built-in lab server, started as a child process on its own CPU.
#include <fmt/core.h>

#include <fstream>
#include <optional>

#include "cli/command.h"
#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/lab_child.h"
#include "cli/load_flags.h"
#include "core/units.h"
#include "http/url.h"
#include "probes/host_context.h"
#include "report/render.h"

namespace knee::cli {
namespace {

// The seed's tracking client: one tracking number per connection and request.
constexpr const char* kLabPath = "/tracking?no=G{conn}-{seq}";

class SweepCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    flags_.add_to(app, /*url_required=*/false, /*with_connections=*/false);
    app.add_option("--levels", levels_, "Concurrency levels, comma-separated, increasing")
        ->capture_default_str();
    app.add_option("--json", json_path_, "Write the whole result as JSON to FILE ('-': stdout)");
    app.add_option("--server-wait", server_wait_,
                   "Built-in server (no URL): wait per tracking request, on a timer")
        ->capture_default_str();
    app.add_option("--server-cpu", server_cpu_,
                   "Built-in server (no URL): CPU burnt per tracking request")
        ->capture_default_str();
    app.add_option("--server-threads", server_threads_,
                   "Built-in server (no URL): event-loop threads")
        ->capture_default_str();
  }

  int run() override {
    auto levels = core::parse_positive_int_list(levels_);
    if (!levels) {
      return report_failure(
          core::Status::invalid_argument(fmt::format("--levels: {}", levels.status().message())));
    }
    for (size_t i = 1; i < levels->size(); ++i) {
      if ((*levels)[i] <= (*levels)[i - 1]) {
        return report_failure(core::Status::invalid_argument(
            fmt::format("--levels: '{}' must be strictly increasing, like 1,2,4,8", levels_)));
      }
    }
    for (const char* flag : {"--server-wait", "--server-cpu"}) {
      const std::string& v = std::string(flag) == "--server-wait" ? server_wait_ : server_cpu_;
      if (auto d = core::parse_duration(v); !d) {
        return report_failure(
            core::Status::invalid_argument(fmt::format("{}: {}", flag, d.status().message())));
      }
    }
    if (server_threads_ < 1) {
      return report_failure(core::Status::invalid_argument("--server-threads: must be 1 or more"));
    }

    std::optional<LabChild> lab;
    std::string target;
    const bool builtin = flags_.url.empty();
    if (builtin) {
      std::vector<int> cpus = allowed_cpus();
      int server_cpu = cpus.size() >= 2 ? cpus.front() : -1;
      auto child = LabChild::start({"--wait", server_wait_, "--cpu", server_cpu_, "--threads",
                                    std::to_string(server_threads_)},
                                   server_cpu);
      if (!child) return report_failure(child.status());
      lab.emplace(std::move(child).value());
      std::string pinning = "server and client share the CPUs (fewer than 2 available)";
      if (server_cpu >= 0) {
        std::vector<int> client(cpus.begin() + 1, cpus.end());
        if (core::Status s = pin_to(client); !s) return report_failure(s);
        pinning = fmt::format("server pinned to CPU {}, client to CPU {}", server_cpu,
                              client.size() == 1 ? std::to_string(client[0]) : "the others");
      }
      flags_.url = fmt::format("http://127.0.0.1:{}{}", lab->port(), kLabPath);
      target = fmt::format(
          "built-in lab server (knee serve, pid {}): {} event-loop thread{}, each tracking "
          "request waits {} on a timer then burns {} of CPU; {}",
          lab->pid(), server_threads_, server_threads_ == 1 ? "" : "s", server_wait_, server_cpu_,
          pinning);
    } else {
      target = flags_.url;
    }

    auto options = flags_.to_options();
    if (!options) return report_failure(options.status());
    const std::atomic<bool>& interrupt = install_interrupt_handler();
    engine::RunControl control;
    control.interrupt = &interrupt;

    std::string started_at = now_iso8601();
    std::vector<core::RunResult> results;
    for (int64_t level : *levels) {
      engine::LoadOptions o = *options;
      o.connections = static_cast<int>(level);
      o.threads = std::min(options->threads, o.connections);
      auto r = engine::run_load(o, control);
      if (!r) return report_failure(r.status());
      results.push_back(std::move(r).value());
      if (results.back().interrupted) break;
    }
    bool interrupted = !results.empty() && results.back().interrupted;
    if (lab) lab->stop();

    report::SweepReport rep =
        report::analyse_sweep(target, started_at, load_params(*options, flags_.url),
                              std::move(results), probes::read_host_context(probes::FsReader()));
    if (interrupted) rep.warnings.push_back("interrupted: the sweep was stopped early");
    if (json_path_ != "-") fmt::print("{}", report::render_sweep_text(rep));
    if (!json_path_.empty()) {
      std::string text = report::sweep_to_json(rep).dump(2) + "\n";
      if (json_path_ == "-") {
        fmt::print("{}", text);
      } else {
        std::ofstream out(json_path_);
        out << text;
        if (!out) {
          return report_failure(core::Status::io_error("--json: cannot write " + json_path_));
        }
      }
    }
    return interrupted ? 130 : kExitOk;
  }

 private:
  LoadFlags flags_;
  std::string levels_ = "1,2,4,8,16,32,64";
  std::string json_path_;
  std::string server_wait_ = "3ms";
  std::string server_cpu_ = "0.2ms";
  int server_threads_ = 1;
};

}  // namespace

std::unique_ptr<Subcommand> make_sweep_command() { return std::make_unique<SweepCommand>(); }

}  // namespace knee::cli
