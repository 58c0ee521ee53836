// The overview, `stepsim help`, usage errors in our own words, and the global flags.
#include <algorithm>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/input.hpp"
#include "cli/input/printable.hpp"

namespace stepsim::cli {

namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// The command being parsed when the error came: the deepest subcommand given (bench merge).
const CLI::App* current_command(const CLI::App& app) {
  const CLI::App* at = &app;
  while (true) {
    const auto subs = at->get_subcommands();
    if (subs.empty()) return at;
    at = subs.front();
  }
}

std::string command_path(const CLI::App* cmd) {
  std::string path;
  for (const CLI::App* at = cmd; at && at->get_parent(); at = at->get_parent())
    path = at->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

std::vector<std::string> option_names(const CLI::App* cmd) {
  std::vector<std::string> names;
  for (const auto* opt : cmd->get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string unknown_command(const CLI::App& app, const std::string& word) {
  const std::string near = nearest(word, command_names(app));
  return fmt::format("unknown command '{}'{} (commands: {}; `stepsim help` for more)", word,
                     near.empty() ? "" : fmt::format("; did you mean '{}'?", near),
                     fmt::join(command_names(app), ", "));
}

}  // namespace

std::string overview(const CLI::App& app) {
  std::string out =
      fmt::format("{}\n\nusage: stepsim [--verbose | --quiet] COMMAND [ARGS...]\n\ncommands:\n", app.get_description());
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    out += fmt::format("  {:<16} {}\n", sub->get_name(), sub->get_description());
  out += "\nscenario kinds (the YAML section names the kind) and the commands that take them:\n";
  for (const auto& k : scenario_kinds())
    out += fmt::format("  {:<14} {:<24} {}\n", k.section,
                       k.command == "run" ? "run, compare, validate" : fmt::format("{}, validate", k.command), k.what);
  // A layout search has its own reader (cli/input/search_input.hpp), not a scenario kind.
  out += fmt::format("  {:<14} {:<24} {}\n", "search", "search, validate",
                     "layouts of a job: the fastest that fits, the fewest cards that meet a deadline");
  out +=
      "\nglobal options: --verbose (notes on stderr), --quiet (errors only), --version, -h/--help\n"
      "`stepsim COMMAND --help` lists a command's options.\n"
      "exit codes: 0 ok, 1 internal error, 2 bad input or usage, 3 a simulation that cannot finish, 4 a check failed\n";
  return out;
}

void add_help_command(CLI::App& app) {
  auto command = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("help", "this overview; `stepsim help COMMAND` shows a command's options");
  cmd->add_option("command", *command, "the command to describe");
  cmd->callback([&app, command] {
    if (command->empty()) {
      fmt::print("{}", overview(app));
      return;
    }
    for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == *command) {
        fmt::print("{}", sub->help(app.get_name()));
        return;
      }
    throw InputError("help", 0, "", unknown_command(app, *command));
  });
}

int report_usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const CLI::App* cmd = current_command(app);
  const std::string path = command_path(cmd);
  if (dynamic_cast<const CLI::RequiredError*>(&e) && cmd == &app) {
    // No command: the first word left over is a mistyped one, or there is none at all.
    for (const auto& word : app.remaining())
      if (word.empty() || word[0] != '-') {
        fmt::print(stderr, "error: {}\n", printable(unknown_command(app, word)));
        return 2;
      }
    fmt::print(stderr, "error: no command given\n\n{}", overview(app));
    return 2;
  }
  std::string message = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> extras;
    for (const CLI::App* at = cmd; at; at = at->get_parent())
      for (const auto& w : at->remaining()) extras.push_back(w);
    const std::string word = extras.empty() ? "" : extras.front();
    if (!word.empty() && word[0] == '-') {
      const std::string option = word.substr(0, word.find('='));
      const std::string near = nearest(option, option_names(cmd));
      message =
          fmt::format("unknown option '{}'{}", option, near.empty() ? "" : fmt::format("; did you mean '{}'?", near));
    } else if (!word.empty()) {
      message = fmt::format("unexpected argument '{}'", word);
    }
  } else if (dynamic_cast<const CLI::ExcludesError*>(&e)) {
    message += ": choose one";
  }
  fmt::print(stderr, "error: {}{}{} (`stepsim {}--help` lists the options)\n", path, path.empty() ? "" : ": ",
             printable(message), path.empty() ? "" : path + " ");
  return 2;
}

GlobalFlags take_global_flags(std::vector<std::string>& args) {
  GlobalFlags g;
  std::vector<std::string> kept;
  bool literal = false;
  for (auto& a : args) {
    if (!literal && a == "--") literal = true;
    if (!literal && a == "--verbose")
      g.verbose = true;
    else if (!literal && a == "--quiet")
      g.quiet = true;
    else
      kept.push_back(std::move(a));
  }
  args = std::move(kept);
  if (g.verbose && g.quiet) throw InputError("--quiet", 0, "", "choose one of --verbose and --quiet");
  return g;
}

}  // namespace stepsim::cli
