#include "docgen/docgen.h"

#include <fmt/format.h>

#include <string_view>

namespace knee::docgen {

namespace {

// Text for roff lines: backslashes and hyphens escaped (man(7): "\-" is a real minus, so
// options can be searched and copied), a control character that would start a line ('.' or
// '\'', also after an embedded line break) neutralised with "\&".
std::string roff(std::string_view s) {
  std::string out;
  bool line_start = true;
  for (const char c : s) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = false;
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '\n') {
      out += "\n.br\n";
      line_start = true;
    } else {
      out += c;
    }
  }
  return out;
}

// A description as a sentence: CLI11's help texts carry no final full stop. Never empty, so a
// .TP paragraph always has a body.
std::string sentence(const std::string& s) {
  if (s.empty()) return "(no description)";
  return s.back() == '.' ? s : s + ".";
}

// The NAME line's description: the app's own, without a leading "knee: " (the root app's).
std::string whatis(std::string description, const std::string& name) {
  const std::string prefix = name + ": ";
  if (description.rfind(prefix, 0) == 0) description.erase(0, prefix.size());
  return description;
}

std::string upper(std::string s) {
  for (char& c : s) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return s;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  size_t from = 0;
  while (from <= s.size()) {
    const size_t to = std::min(s.find(sep, from), s.size());
    if (to > from) parts.emplace_back(s.substr(from, to - from));
    from = to + 1;
  }
  return parts;
}

bool takes_value(const CLI::Option& o) { return o.get_type_size() != 0; }

// What the value looks like in a synopsis: the choices, else the type's first word (INT, TEXT,
// or a name the option gave itself such as INDEX/COUNT).
std::string value_label(const CLI::Option& o) {
  const std::vector<std::string> choices = option_choices(o);
  if (!choices.empty()) {
    std::string label;
    for (const std::string& c : choices) label += (label.empty() ? "" : "|") + c;
    return label;
  }
  const std::string type = o.get_type_name();
  return type.substr(0, type.find(':'));
}

// The option's flags as the page shows them: "\fB\-c\fR, \fB\-\-connections\fR \fIINT\fR".
std::string option_heading(const CLI::Option& o) {
  std::string out;
  for (const std::string& s : o.get_snames()) {
    out += (out.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff("-" + s));
  }
  for (const std::string& l : o.get_lnames()) {
    out += (out.empty() ? "" : ", ") + fmt::format("\\fB{}\\fR", roff("--" + l));
  }
  if (takes_value(o)) out += fmt::format(" \\fI{}\\fR", roff(value_label(o)));
  if (o.get_expected_max() == CLI::detail::expected_max_vector_size) out += " ...";
  return out;
}

std::vector<const CLI::Option*> flags_of(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return o->nonpositional(); });
}

std::vector<const CLI::Option*> positionals_of(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->nonpositional(); });
}

std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

std::string synopsis(const CLI::App& app, const std::string& path) {
  std::string out = fmt::format("\\fB{}\\fR", roff(path));
  if (!subcommands_of(app).empty()) out += " \\fICOMMAND\\fR";
  out += " [\\fIoptions\\fR]";
  for (const CLI::Option* p : positionals_of(app)) {
    const std::string name = roff(upper(p->get_name(true, false)));
    const bool many = p->get_expected_max() == CLI::detail::expected_max_vector_size;
    out += p->get_required() ? fmt::format(" \\fI{}\\fR{}", name, many ? "..." : "")
                             : fmt::format(" [\\fI{}\\fR{}]", name, many ? "..." : "");
  }
  return out + "\n";
}

std::string options_section(const CLI::App& app) {
  std::string out;
  for (const CLI::Option* p : positionals_of(app)) {
    out += fmt::format(".TP\n\\fI{}\\fR\n{}\n", roff(upper(p->get_name(true, false))),
                       roff(sentence(p->get_description())));
  }
  for (const CLI::Option* o : flags_of(app)) {
    out += fmt::format(".TP\n{}\n{}", option_heading(*o), roff(sentence(o->get_description())));
    if (takes_value(*o) && !o->get_default_str().empty()) {
      out += fmt::format(" Default: {}.", roff(o->get_default_str()));
    }
    out += "\n";
  }
  return out;
}

// Subsections for the subcommands below `app` (knee lab data, knee model usl), depth first.
std::string subcommand_sections(const CLI::App& app, const std::string& path) {
  std::string out;
  for (const CLI::App* sub : subcommands_of(app)) {
    const std::string name = path + " " + sub->get_name();
    out += fmt::format(".SS \"{}\"\n", roff(name));
    out += synopsis(*sub, name) + ".PP\n" + roff(sentence(sub->get_description())) + "\n";
    out += options_section(*sub);
    out += subcommand_sections(*sub, name);
  }
  return out;
}

constexpr std::string_view kExitStatus =
    ".SH \"EXIT STATUS\"\n"
    ".TP\n0\nSuccess.\n"
    ".TP\n1\nThe run could not happen (target unreachable, the system refused a resource).\n"
    ".TP\n2\nBad input: one line on standard error names the flag and the accepted form.\n"
    ".TP\n3\nA check failed (\\fB\\-\\-strict\\fR rate, \\fB\\-\\-threshold\\fR).\n"
    ".TP\n130\nInterrupted (SIGINT or SIGTERM), after printing what was measured.\n";

// Shell single-quoted word.
std::string shell_quoted(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// How a value is completed when it is not one of a set: file names for options whose type is
// FILE (or PREFIX, the start of file names), folder names for DIR, nothing otherwise. The options
// say so themselves with ->type_name("FILE"), which --help shows too.
std::string_view path_kind(const CLI::Option& o) {
  const std::string t = o.get_type_name();
  if (t == "FILE" || t == "PREFIX") return "__file";
  if (t == "DIR") return "__dir";
  return "";
}

void completion_node(const CLI::App& app, const std::string& path, std::string& nodes,
                     std::string& values) {
  std::string subs, flags, valued;
  for (const CLI::App* sub : subcommands_of(app))
    subs += (subs.empty() ? "" : " ") + sub->get_name();
  for (const CLI::Option* o : flags_of(app)) {
    std::vector<std::string> names;
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    const std::vector<std::string> choices = option_choices(*o);
    std::string words;
    for (const std::string& c : choices) words += (words.empty() ? "" : " ") + c;
    for (const std::string& n : names) {
      flags += (flags.empty() ? "" : " ") + n;
      if (!takes_value(*o)) continue;
      valued += (valued.empty() ? "" : " ") + n;
      if (!words.empty()) {
        values += fmt::format("    {}) _knee_values={} ;;\n", shell_quoted(path + "|" + n),
                              shell_quoted(words));
      } else if (!path_kind(*o).empty()) {
        values += fmt::format("    {}) _knee_values={} ;;\n", shell_quoted(path + "|" + n),
                              path_kind(*o));
      }
    }
  }
  std::string_view positional;  // how the command's positional values complete (report FILE...)
  for (const CLI::Option* p : positionals_of(app)) {
    if (positional.empty()) positional = path_kind(*p);
  }
  nodes +=
      fmt::format("    {}) _knee_subs={} _knee_flags={} _knee_valued={} _knee_positional={} ;;\n",
                  shell_quoted(path), shell_quoted(subs), shell_quoted(flags), shell_quoted(valued),
                  shell_quoted(positional));
  for (const CLI::App* sub : subcommands_of(app)) {
    completion_node(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), nodes,
                    values);
  }
}

}  // namespace

std::vector<std::string> option_choices(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  const size_t open = type.find(":{");
  if (open != std::string::npos && type.back() == '}') {
    return split(std::string_view(type).substr(open + 2, type.size() - open - 3), ',');
  }
  if (type.find('|') != std::string::npos && type.find(' ') == std::string::npos) {
    return split(type, '|');
  }
  return {};
}

std::string man_page(const CLI::App& root, const CLI::App* sub, const std::string& version) {
  const CLI::App& app = sub != nullptr ? *sub : root;
  const std::string name = sub != nullptr ? "knee-" + sub->get_name() : "knee";
  const std::string path = sub != nullptr ? "knee " + sub->get_name() : "knee";
  std::string out = fmt::format(
      ".\\\" Generated by knee-docgen from knee's option table (src/docgen/docgen.cc); do not "
      "edit.\n"
      ".TH {} 1 \"\" \"knee {}\" \"User Commands\"\n.SH NAME\n{} \\- {}\n.SH SYNOPSIS\n",
      roff(upper(name)), roff(version), roff(name), roff(whatis(app.get_description(), name)));
  out += synopsis(app, path);
  if (sub == nullptr) out += ".br\n\\fBknee\\fR \\fB\\-\\-version\\fR\n";
  out += ".SH DESCRIPTION\n";
  if (sub == nullptr) {
    out +=
        "knee drives load at a server, finds where it saturates (the knee), names the resource "
        "that saturated (server CPU, disk, network, or the load generator itself), checks its "
        "own numbers against Little's law and says how much headroom is left against a planned "
        "peak. Each command has its own page, listed below.\n"
        ".SH COMMANDS\n";
    for (const CLI::App* s : subcommands_of(root)) {
      out += fmt::format(".TP\n\\fB{}\\fR\n{} See \\fBknee\\-{}\\fR(1).\n", roff(s->get_name()),
                         roff(sentence(s->get_description())), roff(s->get_name()));
    }
  } else {
    out += roff(sentence(app.get_description())) + "\n";
    if (!app.get_footer().empty()) out += ".PP\n" + roff(app.get_footer()) + "\n";
  }
  out += ".SH OPTIONS\n" + options_section(app);
  if (sub != nullptr && !subcommands_of(app).empty()) {
    out += ".SH COMMANDS\n" + subcommand_sections(app, path);
  }
  out += kExitStatus;
  out +=
      ".SH ENVIRONMENT\n.TP\nNO_COLOR\nAccepted; knee prints no colour.\n"
      ".TP\nXDG_STATE_HOME\nThe lab's state folder is $XDG_STATE_HOME/knee/lab (else "
      "~/.local/state/knee/lab).\n";
  out += ".SH \"SEE ALSO\"\n";
  if (sub == nullptr) {
    std::string see;
    for (const CLI::App* s : subcommands_of(root)) {
      see += (see.empty() ? "" : ",\n") + fmt::format("\\fBknee\\-{}\\fR(1)", roff(s->get_name()));
    }
    out += see +
           "\n.PP\nThe full guide is README.md in the documentation folder: share/doc/knee under "
           "the installation prefix (/usr/share/doc/knee for the package).\n";
  } else {
    out += "\\fBknee\\fR(1)\n";
  }
  return out;
}

std::string bash_completion(const CLI::App& root) {
  std::string nodes, values;
  completion_node(root, "", nodes, values);
  return fmt::format(
      "# bash completion for knee(1): subcommands, flags and the values of enumerated flags.\n"
      "# Generated by knee-docgen from knee's option table (src/docgen/docgen.cc); do not edit.\n"
      "\n"
      "# Sets _knee_subs, _knee_flags, _knee_valued (flags that take a value) and "
      "_knee_positional\n"
      "# (__file when the command's positional values are files) for a command path.\n"
      "_knee_node() {{\n"
      "  case \"$1\" in\n"
      "{}"
      "    *) _knee_subs='' _knee_flags='' _knee_valued='' _knee_positional='' ;;\n"
      "  esac\n"
      "}}\n"
      "\n"
      "# Sets _knee_values to the values of flag $2 under path $1: words, __file, __dir, or "
      "empty.\n"
      "_knee_flag_values() {{\n"
      "  _knee_values=''\n"
      "  case \"$1|$2\" in\n"
      "{}"
      "  esac\n"
      "}}\n"
      "\n"
      "_knee() {{\n"
      "  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} path='' i w\n"
      "  COMPREPLY=()\n"
      "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
      "    w=${{COMP_WORDS[i]}}\n"
      "    [[ $w == -* ]] && continue\n"
      "    _knee_node \"$path\"\n"
      "    [[ $i -gt 1 && \" $_knee_valued \" == *\" ${{COMP_WORDS[i-1]}} \"* ]] && continue\n"
      "    [[ \" $_knee_subs \" == *\" $w \"* ]] && path=${{path:+$path }}$w\n"
      "  done\n"
      "  _knee_node \"$path\"\n"
      "  if [[ $COMP_CWORD -gt 1 && \" $_knee_valued \" == *\" $prev \"* ]]; then\n"
      "    _knee_flag_values \"$path\" \"$prev\"\n"
      "    if [[ $_knee_values == __file || $_knee_values == __dir ]]; then\n"
      "      compopt -o filenames 2>/dev/null  # a / after folders, names with spaces whole\n"
      "      if [[ $_knee_values == __dir ]]; then\n"
      "        mapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n"
      "      else\n"
      "        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
      "      fi\n"
      "    elif [[ -n $_knee_values ]]; then\n"
      "      mapfile -t COMPREPLY < <(compgen -W \"$_knee_values\" -- \"$cur\")\n"
      "    fi\n"
      "    return 0\n"
      "  fi\n"
      "  if [[ $cur != -* && -z $_knee_subs && -n $_knee_positional ]]; then\n"
      "    compopt -o filenames 2>/dev/null\n"
      "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
      "  elif [[ $cur == -* || -z $_knee_subs ]]; then\n"
      "    mapfile -t COMPREPLY < <(compgen -W \"$_knee_flags\" -- \"$cur\")\n"
      "  else\n"
      "    mapfile -t COMPREPLY < <(compgen -W \"$_knee_subs\" -- \"$cur\")\n"
      "  fi\n"
      "}}\n"
      "complete -F _knee knee\n",
      nodes, values);
}

}  // namespace knee::docgen
