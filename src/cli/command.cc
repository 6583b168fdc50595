// How a failure is printed and which exit code it gets, for every subcommand.
#include "cli/command.h"

#include <fmt/core.h>

#include "cli/interrupt.h"

namespace knee::cli {

using core::Status;

std::string flag_of(const std::string& field) {
  // clang-format off
  static const std::pair<const char*, const char*> kFlags[] = {
      {"connections", "-c/--connections"}, {"max_connections", "-c/--connections"},
      {"threads", "-t/--threads"}, {"duration", "-d/--duration"}, {"warmup", "-w/--warmup"},
      {"timeout", "--timeout"}, {"grace", "--grace"}, {"rate_rps", "-r/--rate"},
      {"spin", "--spin"}, {"io", "--io"}, {"arrival", "--arrival"}, {"url", "URL"}, {"count", "-n/--count"}, {"requests", "-n/--requests"},
      {"n", "--n"}, {"x", "--x"}, {"r", "--r"}, {"lambda", "--lambda"}, {"from", "--from"},
      {"mu", "--mu"}, {"levels", "--levels"}, {"rates", "--rate"},
      {"start_rate", "--start-rate"}, {"max_rate", "--max-rate"}, {"precision", "--precision"},
      {"cacert", "--cacert"}, {"cert", "--cert"}, {"key", "--key"}, {"tls", "--tls"},
      {"h2", "--h2/--h2c"}, {"streams", "--streams"}, {"pipeline", "--pipeline"},
      {"per_connection", "--streams/--pipeline"}, {"records", "--records"}, {"days", "--days"},
      {"cache", "--cache"}, {"store_threads", "--store-threads"},
      {"commit_batch", "--commit-batch"}, {"commit_delay", "--commit-delay"},
      {"sellers", "--sellers"}, {"mix", "--mix"}, {"shipments", "--shipments"},
      {"zipf", "--zipf"}, {"stages", "--stages"}, {"part", "--part"}, {"start_at", "--start-at"}, {"replicas", "--replicas"},
      {"balance", "--balance"}, {"port", "--port"},
      {"replica_cost", "--replica-cost"}, {"next_upstream", "--next-upstream"},
      {"pause", "--pause"}, {"db", "--db"}};
  // clang-format on
  for (const auto& [f, flag] : kFlags) {
    if (field == f) return flag;
  }
  return field;
}

std::string failure_text(const Status& status) {
  if (status.field().empty()) return status.message();
  return fmt::format("{}: {}", flag_of(status.field()), status.message());
}

int report_failure(const Status& status) { return report_failure(status, ""); }

int report_failure(const Status& status, std::string_view command) {
  const std::string who = command.empty() ? "knee" : fmt::format("knee {}", command);
  if (interrupt_requested()) {
    // Ctrl-C during the pre-flight connect or handshake: the failure is the interruption's.
    // Regression: it exited 1 as if the target were unreachable.
    fmt::print(stderr, "{}: interrupted before measuring began ({})\n", who, status.message());
    return kExitInterrupted;
  }
  fmt::print(stderr, "{}: {}\n", who, failure_text(status));
  return status.code() == Status::Code::kInvalidArgument ? kExitBadInput : kExitRunFailed;
}

}  // namespace knee::cli
