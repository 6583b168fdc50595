#include "cli/parse_errors.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"

namespace knee::cli {
namespace {

// The deepest subcommand parsed (`knee lab data ...` gives lab's data), or nullptr.
CLI::App* deepest_parsed(const std::vector<CLI::App*>& subs) {
  for (CLI::App* s : subs) {
    if (!s->parsed()) continue;
    CLI::App* deepest = s;
    for (CLI::App* sub = s; sub != nullptr;) {
      CLI::App* next = nullptr;
      for (CLI::App* child : sub->get_subcommands()) next = child;
      if (next != nullptr) deepest = next;
      sub = next;
    }
    return deepest;
  }
  return nullptr;
}

// "lab data ", "model usl ", "" for none: where the accepted options are listed.
// Regression: `knee lab data --days 2.5` pointed to 'knee lab --help', and a missing required
// flag of `knee model usl` to 'knee --help'.
std::string help_path(const CLI::App* app) {
  std::string path;
  for (; app != nullptr && app->get_parent() != nullptr; app = app->get_parent()) {
    path = app->get_name() + " " + path;
  }
  return path;
}

// CLI11's "Could not convert: --connections = 99999999999" (CLI11 2.1, CLI/Error.hpp's
// ConversionError) as knee's own form: the flag's names, the value, what was wrong with it.
// Any other conversion message is kept as CLI11 wrote it.
std::string conversion_text(const CLI::App* app, const std::string& what) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const size_t eq = what.find(" = ");
  if (app == nullptr || !what.starts_with(kPrefix) || eq == std::string::npos) return what;
  const std::string name = what.substr(kPrefix.size(), eq - kPrefix.size());
  const std::string value = what.substr(eq + 3);
  const CLI::Option* opt = app->get_option_no_throw(name);
  if (opt == nullptr) return what;
  std::string flag = opt->get_name(false, true);
  std::replace(flag.begin(), flag.end(), ',', '/');
  const std::string type = opt->get_type_name();
  std::string_view digits = value;
  if (digits.starts_with('-') || digits.starts_with('+')) digits.remove_prefix(1);
  const bool integral =
      !digits.empty() && std::all_of(digits.begin(), digits.end(),
                                     [](unsigned char c) { return std::isdigit(c) != 0; });
  if (type.starts_with("INT") || type.starts_with("UINT")) {
    if (integral) {
      return fmt::format("{}: {} is out of range for this flag", flag, value);
    }
    return fmt::format("{}: '{}' is not a whole number", flag, value);
  }
  if (type.starts_with("FLOAT")) {
    // Regression (a new user's trial): `run --rate 100,200` read as a bad number; lists of
    // rates are a sweep's.
    return fmt::format("{}: '{}' is not a number (such as 1000, 2.5 or 1e4){}", flag, value,
                       value.find(',') != std::string::npos
                           ? "; it takes one value, not a list (a list of levels is knee sweep's)"
                           : "");
  }
  return fmt::format("{}: '{}' is not a value it takes", flag, value);
}

// For CLI11's "The following arguments were not expected: ..." (ExtrasError): the first flag
// in argv that `app` does not take but another command does, as "`knee sweep` does not take
// --stages; it is a flag of `knee run`", or, when `app` takes the same option by its long name
// only, "`knee sweep` does not take -r; write --rate". Empty when no such flag is found
// (CLI11's message stands). Regression (a new user's trial): `knee sweep URL --stages 1s:10`
// printed "The following arguments were not expected: 1s:10 --stages", and `knee sweep URL -r
// 100` the same of -r.
std::string misplaced_flag_text(const CLI::App* app, const std::vector<CLI::App*>& subs, int argc,
                                char** argv) {
  if (app == nullptr) return "";
  const auto command = [](const CLI::App* a) {
    std::string path = help_path(a);
    if (!path.empty()) path.pop_back();
    return fmt::format("`knee {}`", path);
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    const bool long_flag = arg.starts_with("--") && arg.size() > 2;
    const bool short_flag = !long_flag && arg.size() == 2 && arg[0] == '-' && arg[1] != '-';
    if (!long_flag && !short_flag) continue;
    const std::string name(arg.substr(0, arg.find('=')));
    if (app->get_option_no_throw(name) != nullptr) continue;
    std::string owners;
    std::vector<CLI::App*> pending = subs;  // every command, `lab data` and `model usl` too
    while (!pending.empty()) {
      CLI::App* sub = pending.back();
      pending.pop_back();
      for (CLI::App* child : sub->get_subcommands([](CLI::App*) { return true; })) {
        pending.push_back(child);
      }
      const CLI::Option* theirs = sub == app ? nullptr : sub->get_option_no_throw(name);
      if (theirs == nullptr) continue;
      for (const std::string& lname : theirs->get_lnames()) {
        if (short_flag && app->get_option_no_throw("--" + lname) != nullptr) {
          return fmt::format("{} does not take {}; write --{}", command(app), name, lname);
        }
      }
      owners += (owners.empty() ? "" : " or ") + command(sub);
    }
    if (!owners.empty()) {
      return fmt::format("{} does not take {}; it is a flag of {}", command(app), name, owners);
    }
  }
  return "";
}

// For an ExtrasError whose extra argument follows a flag of `app` that takes no value: "`knee
// probe`'s --json takes no file: it prints on stdout; redirect it (--json > out.json)", or for
// another flag "... --x takes no value; 'y' was left over". Empty when no such pair is found.
// Regression (a new user's trial): `knee probe URL --json out.json` (run and sweep take a file)
// printed "The following argument was not expected: out.json".
std::string valueless_flag_text(const CLI::App* app, const std::string& what, int argc,
                                char** argv) {
  if (app == nullptr) return "";
  std::string path = help_path(app);
  if (!path.empty()) path.pop_back();
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::string next = argv[i + 1];
    if (arg == "--") break;
    if (!arg.starts_with("-") || next.starts_with("-") || what.find(next) == std::string::npos) {
      continue;
    }
    const CLI::Option* opt = app->get_option_no_throw(std::string(arg));
    if (opt == nullptr || opt->get_positional() || opt->get_expected_max() != 0) continue;
    if (arg == "--json") {
      return fmt::format(
          "`knee {}`'s --json takes no file: it prints on stdout; redirect it "
          "(--json > {})",
          path, next);
    }
    return fmt::format("`knee {}`'s {} takes no value; '{}' was left over", path, arg, next);
  }
  return "";
}

}  // namespace

int report_parse_error(const CLI::ParseError& e, const KneeApp& knee_app, int argc, char** argv) {
  const CLI::App* deepest = deepest_parsed(knee_app.subs);
  std::string what = e.what();
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && argc > 1 && argv[1][0] != '-' &&
      knee_app.cli.get_subcommands().empty()) {
    fmt::print(stderr,
               "knee: unknown command '{}'; use one of sweep, run, serve, report, model, capacity, "
               "ladder, probe, lab\n",
               argv[1]);
    return kExitBadInput;
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    // Regression: `-c 99999999999` printed CLI11's "Could not convert: --connections = ...".
    what = conversion_text(deepest, what);
  } else if (const size_t at = what.find(": Value ");
             at != std::string::npos && what.find(" not in range ", at) != std::string::npos) {
    // CLI::Range's "--port: Value 18080x not in range 0 to 65535", where the value is not a
    // number at all (a new user's trial): say that, and keep the range otherwise.
    const size_t from = at + 8;
    const std::string value = what.substr(from, what.find(" not in range ", at) - from);
    const bool number =
        !value.empty() && value.find_first_not_of("0123456789+-.eE") == std::string::npos;
    if (!number) what = fmt::format("{}: '{}' is not a number", what.substr(0, at), value);
  } else if (const size_t in = what.rfind(" not in {");
             dynamic_cast<const CLI::ValidationError*>(&e) != nullptr && in != std::string::npos &&
             what.find(": ") < in && what.ends_with("}")) {
    // CLI::IsMember's "--io: uring2 not in {epoll,uring}": the value quoted, so an empty one shows
    // (regression: `--io ''` printed "--io:  not in ..."), and the choices as a list.
    const size_t colon = what.find(": ");
    std::string choices = what.substr(in + 9, what.size() - in - 10);
    std::replace(choices.begin(), choices.end(), ',', '|');
    what = fmt::format("{}: '{}' is not one of {}", what.substr(0, colon),
                       what.substr(colon + 2, in - colon - 2), choices);
  } else if (what.find(": At Most 1 required but received ") != std::string::npos) {
    // CLI11's ArgumentMismatch for a flag given twice (regression: `--stages 1s:10 --stages
    // 1s:20` printed it as it stands).
    what = what.substr(0, what.find(':')) + ": given more than once; give it once";
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::string misplaced = misplaced_flag_text(deepest, knee_app.subs, argc, argv);
    const std::string valueless = valueless_flag_text(deepest, what, argc, argv);
    if (!misplaced.empty()) {
      what = misplaced;
    } else if (!valueless.empty()) {
      what = valueless;
    }
  }
  fmt::print(stderr, "knee: {}\nRun 'knee {}--help' for the accepted options.\n", what,
             help_path(deepest));
  return kExitBadInput;
}

}  // namespace knee::cli
