// Ctrl-C for measuring commands: SIGINT/SIGTERM set a flag the engine polls, so a run ends
// cleanly (children stopped, partial results marked) instead of dying mid-write.
#pragma once

#include <atomic>

namespace knee::cli {

// Installs the handlers (once) and returns the flag they set.
const std::atomic<bool>& install_interrupt_handler();
// Whether SIGINT/SIGTERM arrived since the handlers were installed (false before).
bool interrupt_requested();

}  // namespace knee::cli
