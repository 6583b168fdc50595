// `knee lab up|status|deploy|down`: the lab stack's subcommands (lab/stack.h), declared on `knee
// lab` beside data and billing.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace knee::cli {

class LabStackCommands {
 public:
  // Declares up, status, deploy and down as subcommands of `lab`.
  void add_to(CLI::App& lab);
  // The exit code of the one that was parsed; nullopt when none was.
  std::optional<int> run();

 private:
  int run_up();
  int run_status();
  int run_down();
  int run_deploy();
  std::string dir() const;

  CLI::App* up_ = nullptr;
  CLI::App* status_ = nullptr;
  CLI::App* down_ = nullptr;
  CLI::App* deploy_ = nullptr;
  std::string next_upstream_ = "error timeout http_502";
  bool graceful_ = false, abrupt_ = false, rolling_ = false;
  std::string pause_ = "1s";
  std::string state_;
  int replicas_ = 3;
  std::string lb_ = "nginx";
  std::string nginx_ = "/usr/sbin/nginx";
  bool no_pin_ = false;
  std::string cache_;             // "" or redis
  std::string records_ = "100k";  // --db postgres: the data set's size
  std::string balance_ = "round_robin";
  int port_ = 8080;
  std::string db_;  // "", or sqlite: the replicas serve the state folder's data set
  std::vector<std::string> replica_costs_;  // --replica-cost NAME=cpu:DURATION
};

}  // namespace knee::cli
