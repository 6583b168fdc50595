// What `knee report` checks of the names it was given before it reads any file (its merge form
// excepted): each of the mistakes new users made, refused with what to give instead.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace knee::cli {

// `files` as given (not "merge ..."), `output` -o's FILE ("" without). Errors (kInvalidArgument,
// a one-line fix): a first word 'compare' or 'diff' (the two results are given directly), a
// folder, -o with logs or with a name that is not .html, one JSON result given twice.
core::Status check_report_inputs(const std::vector<std::string>& files, const std::string& output);

}  // namespace knee::cli
