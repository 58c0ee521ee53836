#include "fuzz_entry.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/input.hpp"
#include "cli/input/scenario.hpp"
#include "cli/input/search_input.hpp"
#include "cli/input/validation_csv.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "sim/engine.hpp"

namespace stepsim::fuzz {

namespace {

// Named inside scenarios/ so that `file:` references (models/..., hardware/...) find the shipped
// files when run from the source folder, as scripts/fuzz.sh and ctest do.
constexpr const char* kName = "scenarios/fuzz.yaml";

[[noreturn]] void unexpected(const char* what, const std::string& message) {
  std::fprintf(stderr, "stepsim fuzz: %s: %s\n", what, message.c_str());
  std::abort();
}

// An input error is fine if it is one line.
void check_message(const std::string& message) {
  if (message.find('\n') != std::string::npos) unexpected("message over several lines", message);
}

void load_and_validate(const std::string& text) {
  const cli::Scenario sc = cli::parse_scenario(text, kName);
  for (const auto& kind : cli::scenario_kinds())
    if (kind.validate && kind.present(sc)) kind.validate(sc);
}

}  // namespace

void run_one(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Search scenarios and measured-run CSVs (check-against, calibrate) have loaders of their own;
  // other files fail there at once.
  for (const int loader : {0, 1, 2}) {
    try {
      if (loader == 0)
        load_and_validate(text);
      else if (loader == 1)
        cli::parse_search(text, kName);
      else
        cli::parse_measured_runs(text, "validation/fuzz.csv");
    } catch (const cli::InputError& e) {
      check_message(e.what());
    } catch (const SpecError& e) {  // the CLI turns it into an InputError at the key
      check_message(e.what());
    } catch (const OverflowError& e) { check_message(e.what()); } catch (const DeadlockError& e) {
      check_message(e.what());
    } catch (const GraphError& e) { check_message(e.what()); } catch (const std::exception& e) {
      unexpected("unexpected exception (stepsim would exit 1)", e.what());
    }
  }
}

}  // namespace stepsim::fuzz
