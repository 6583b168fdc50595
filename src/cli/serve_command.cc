// `knee serve`: runs the lab server until SIGTERM or SIGINT, then drains and exits.
//
// The first stdout line is exactly "listening on HOST:PORT" (flushed at once), which scripts and
// `knee sweep` read to learn an ephemeral port.
#include <fmt/core.h>

#include <cstdio>
#include <string>

#include "cli/command.h"
#include "core/units.h"
#include "lab/lab_server.h"

namespace knee::cli {
namespace {

class ServeCommand final : public Subcommand {
 public:
  void add_options(CLI::App& app) override {
    app.add_option("--host", host_, "Address or host name to listen on")->capture_default_str();
    app.add_option("--port", port_, "TCP port; 0 picks a free one (see the first output line)")
        ->capture_default_str()
        ->check(CLI::Range(0, 65535));
    app.add_option("-t,--threads", threads_,
                   "Event-loop threads, each with its own listener on the port (SO_REUSEPORT)")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    app.add_option("--instance", instance_, "Instance name that /fast, /slow-* and /health report")
        ->capture_default_str();
    app.add_option("--wait", wait_,
                   "/tracking's wait per request, on a timer (the loop stays free): 3ms, 0")
        ->capture_default_str();
    app.add_option("--cpu", cpu_, "/tracking's CPU share per request, in thread CPU time: 200us")
        ->capture_default_str();
    app.add_option("--drain-timeout", drain_timeout_,
                   "On SIGTERM/SIGINT, how long requests in flight may take to finish")
        ->capture_default_str();
  }

  int run() override {
    lab::ServerOptions options;
    options.host = host_;
    options.port = port_;
    options.threads = threads_;
    options.instance = instance_;
    struct Duration {
      const char* flag;
      const std::string& text;
      core::Nanos& out;
    };
    for (const Duration& d :
         {Duration{"--wait", wait_, options.wait}, Duration{"--cpu", cpu_, options.cpu},
          Duration{"--drain-timeout", drain_timeout_, options.drain_timeout}}) {
      auto parsed = core::parse_duration(d.text);
      if (!parsed) {
        fmt::print(stderr, "knee serve: {}: {}\n", d.flag, parsed.status().message());
        return kExitBadInput;
      }
      d.out = *parsed;
    }

    auto clean = lab::serve_until_signalled(options, [](const net::SocketAddress& address) {
      fmt::print("listening on {}\n", address.to_string());
      std::fflush(stdout);
    });
    if (!clean) {
      fmt::print(stderr, "knee serve: {}\n", clean.status().message());
      return clean.status().code() == core::Status::Code::kInvalidArgument ? kExitBadInput
                                                                           : kExitRunFailed;
    }
    if (!*clean) {
      fmt::print(stderr, "knee serve: drain timed out after {}: requests in flight were cut off\n",
                 drain_timeout_);
      return kExitRunFailed;
    }
    return kExitOk;
  }

 private:
  std::string host_ = "127.0.0.1";
  int port_ = 8080;
  int threads_ = 1;
  std::string instance_ = "app1";
  std::string wait_ = "3ms";
  std::string cpu_ = "200us";
  std::string drain_timeout_ = "5s";
};

}  // namespace

std::unique_ptr<Subcommand> make_serve_command() { return std::make_unique<ServeCommand>(); }

}  // namespace knee::cli
