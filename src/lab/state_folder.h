// The lab's state folder: where `knee lab data` writes the shipment service's data set, `knee
// serve --state` reads it and `knee lab up` keeps the stack's record (DIR/stack/stack.json).
// Its place follows the XDG Base Directory Specification's XDG_STATE_HOME ("state data that
// should persist between restarts"): $XDG_STATE_HOME/knee/lab when that is an absolute path,
// else $HOME/.local/state/knee/lab, else ./.local/state/knee/lab.
// Errors quote --state and --db, the two options that name a store's location, since they say
// which one to give or what to type (docs/architecture.md, "Errors are values", lists this
// exception with the typed text of a load).
#pragma once

#include <string>

#include "core/status.h"

namespace knee::lab {

// The default state folder for these two environment values (either may be null: unset). An
// XDG_STATE_HOME that is empty or relative is ignored, as the specification asks.
std::string default_state_dir(const char* xdg_state_home, const char* home);
// The same for this process's environment.
std::string default_state_dir();

// The shipment service's SQLite database in a state folder: DIR/shipments.db.
std::string database_in(const std::string& state_dir);

// Where the shipment service's store is: `db` when given (a postgresql:// URL, libpq's form),
// else the SQLite database in `state_dir` (the default folder when empty), which is made when
// missing. Errors: kInvalidArgument naming the option (both given, a `db` that is not
// postgresql://, a folder that cannot be made, with the OS's reason).
core::Result<std::string> store_location(const std::string& state_dir, const std::string& db);

}  // namespace knee::lab
