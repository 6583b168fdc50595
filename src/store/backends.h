// The store's backends, behind open_store and load_data (store.cc picks one by the location).
// Internal to store/.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "store/data.h"
#include "store/store.h"

namespace knee::store {

core::Result<std::unique_ptr<Store>> open_sqlite(const std::string& path);
core::Result<LoadStats> load_sqlite(const std::string& path, const DataSpec& spec, bool replace,
                                    const LoadProgress& progress,
                                    const std::function<bool()>& interrupted);

core::Result<std::unique_ptr<Store>> open_postgres(const std::string& url);
core::Result<LoadStats> load_postgres(const std::string& url, const DataSpec& spec, bool replace,
                                      const LoadProgress& progress,
                                      const std::function<bool()>& interrupted);

// Rows the data set of `spec` holds (sellers, shipments, events): a progress bar's total.
int64_t total_rows(const DataSpec& spec);

}  // namespace knee::store
