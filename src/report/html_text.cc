#include "report/html_text.h"

namespace knee::report::html_text {

using nlohmann::json;

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_json(const json& j) {
  std::string dumped = j.dump();
  std::string out;
  out.reserve(dumped.size());
  for (char c : dumped) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string script_text(std::string_view js) {
  std::string out(js);
  for (size_t at = out.find("</"); at != std::string::npos; at = out.find("</", at + 3)) {
    out.replace(at, 2, "<\\/");
  }
  return out;
}

}  // namespace knee::report::html_text
