#include "lab/state_folder.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "store/store.h"

namespace knee::lab {

std::string default_state_dir(const char* xdg_state_home, const char* home) {
  if (xdg_state_home != nullptr && *xdg_state_home == '/') {
    return std::string(xdg_state_home) + "/knee/lab";
  }
  return std::string(home != nullptr && *home != '\0' ? home : ".") + "/.local/state/knee/lab";
}

std::string default_state_dir() {
  return default_state_dir(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
}

std::string database_in(const std::string& state_dir) { return state_dir + "/shipments.db"; }

core::Result<std::string> store_location(const std::string& state_dir, const std::string& db) {
  if (!db.empty()) {
    if (!state_dir.empty()) {
      return core::Status::invalid_argument(
          "--state and --db: give one; SQLite lives in the state folder, PostgreSQL at --db");
    }
    if (!store::is_postgres_url(db)) {
      return core::Status::invalid_argument(
          fmt::format("--db: '{}' is not a postgresql:// URL; give "
                      "postgresql://USER@HOST:PORT/DB (SQLite needs no --db: it lives in --state)",
                      db));
    }
    return db;
  }
  const std::string dir = state_dir.empty() ? default_state_dir() : state_dir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Status::invalid_argument(
        fmt::format("--state: cannot make the folder '{}': {}", dir, ec.message()));
  }
  return database_in(dir);
}

}  // namespace knee::lab
