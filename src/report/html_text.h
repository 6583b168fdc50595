// Text put into knee's HTML pages (the report, html.cc, and the Traffic Lab, sim.cc): escaping
// for element content and attributes, and JSON and scripts inside <script> elements such that
// nothing in them can end the element early. Pure functions; thread-safety: none needed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace knee::report::html_text {

// `s` with & < > " ' as character references (HTML 5, 13.1.4), for content and attributes.
std::string esc(std::string_view s);

// JSON for <script type="application/json">: '<' can only occur inside JSON strings, where
// \u003c means the same character, so no "</script>" or "<!--" survives.
std::string script_json(const nlohmann::json& j);

// A script's text inside <script>: "</script" would end the element; "<\/script" means the same
// in JavaScript strings and regular expressions.
std::string script_text(std::string_view js);

}  // namespace knee::report::html_text
