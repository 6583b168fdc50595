#include <fmt/core.h>

#include "store/backends.h"

namespace knee::store {

bool is_postgres_url(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

int64_t total_rows(const DataSpec& spec) {
  const DataGenerator gen(spec);
  int64_t total = spec.sellers;
  for (int64_t id = 1; id <= spec.records; ++id) total += 1 + gen.event_count(id);
  return total;
}

core::Result<std::unique_ptr<Store>> open_store(const std::string& location) {
  return is_postgres_url(location) ? open_postgres(location) : open_sqlite(location);
}

core::Result<LoadStats> load_data(const std::string& location, const DataSpec& spec, bool replace,
                                  const LoadProgress& progress,
                                  const std::function<bool()>& interrupted) {
  if (core::Status s = spec.validate(); !s) return s;
  return is_postgres_url(location) ? load_postgres(location, spec, replace, progress, interrupted)
                                   : load_sqlite(location, spec, replace, progress, interrupted);
}

}  // namespace knee::store
