// knee: measures latency and throughput honestly. Parses, dispatches to a subcommand, exits.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli/app.h"

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
    return fmt::format("{}: '{}' is not a number (such as 1000, 2.5 or 1e4)", flag, value);
  }
  return fmt::format("{}: '{}' is not a value it takes", flag, value);
}

// For CLI11's "The following arguments were not expected: ..." (ExtrasError): the first flag
// in argv that `app` does not take but another command does, as "`knee sweep` does not take
// --stages; it is a flag of `knee run`". Empty when no such flag is found (CLI11's message
// stands). Regression (a new user's trial): `knee sweep URL --stages 1s:10` printed "The
// following arguments were not expected: 1s:10 --stages".
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
    if (!arg.starts_with("--") || arg.size() < 3) continue;
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
      if (sub == app || sub->get_option_no_throw(name) == nullptr) continue;
      owners += (owners.empty() ? "" : " or ") + command(sub);
    }
    if (!owners.empty()) {
      return fmt::format("{} does not take {}; it is a flag of {}", command(app), name, owners);
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const std::unique_ptr<knee::cli::KneeApp> knee_app = knee::cli::make_app();
  CLI::App& app = knee_app->cli;
  const std::vector<CLI::App*>& subs = knee_app->subs;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      fmt::print(
          stderr,
          "knee: unknown command '{}'; use one of sweep, run, serve, report, model, capacity, "
          "ladder, probe, lab\n",
          argv[1]);
      return knee::cli::kExitBadInput;
    }
    fmt::print(stderr, "knee: {}\nRun 'knee {}--help' for the accepted options.\n", e.what(),
               help_path(deepest_parsed(subs)));
    return knee::cli::kExitBadInput;
  } catch (const CLI::ConversionError& e) {
    // Regression: `-c 99999999999` printed CLI11's "Could not convert: --connections = ...".
    const CLI::App* deepest = deepest_parsed(subs);
    fmt::print(stderr, "knee: {}\nRun 'knee {}--help' for the accepted options.\n",
               conversion_text(deepest, e.what()), help_path(deepest));
    return knee::cli::kExitBadInput;
  } catch (const CLI::ExtrasError& e) {
    const CLI::App* deepest = deepest_parsed(subs);
    const std::string misplaced = misplaced_flag_text(deepest, subs, argc, argv);
    fmt::print(stderr, "knee: {}\nRun 'knee {}--help' for the accepted options.\n",
               misplaced.empty() ? std::string(e.what()) : misplaced, help_path(deepest));
    return knee::cli::kExitBadInput;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "knee: {}\nRun 'knee {}--help' for the accepted options.\n", e.what(),
               help_path(deepest_parsed(subs)));
    return knee::cli::kExitBadInput;
  }
  for (size_t i = 0; i < subs.size(); ++i) {
    if (subs[i]->parsed()) return knee_app->commands[i]->run();
  }
  return knee::cli::kExitBadInput;
}
