#include "cli/interrupt.h"

#include <csignal>

namespace knee::cli {
namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int) { g_interrupted.store(true, std::memory_order_relaxed); }

}  // namespace

bool interrupt_requested() { return g_interrupted.load(std::memory_order_relaxed); }

const std::atomic<bool>& install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  // A closed terminal: stop what runs (an --exec command's process group too) and report.
  sigaction(SIGHUP, &sa, nullptr);
  return g_interrupted;
}

}  // namespace knee::cli
