#pragma once
// What stepsim says on stderr besides errors: warnings, notes (--verbose) and the progress of long
// work. Warnings and notes go through spdlog ("warning: ...", "debug: ..."); --quiet keeps only
// errors, --verbose adds the debug notes. Progress is a line rewritten in place, only when stderr
// is a terminal, and never for --json. Lower layers do not log: they take a progress callback
// (std::function<void(done, total)>) and the commands pass Progress::callback() down.
#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>

#include <fmt/format.h>

namespace stepsim::cli {

enum class Verbosity { Quiet, Normal, Verbose };

// Sets up the stderr logger; main() calls it once the global flags are read.
void set_verbosity(Verbosity v);
Verbosity verbosity();

void log_warning(const std::string& message);
void log_info(const std::string& message);   // shown unless --quiet
void log_debug(const std::string& message);  // shown with --verbose

template <class... Args>
void warn(fmt::format_string<Args...> f, Args&&... args) {
  log_warning(fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void note(fmt::format_string<Args...> f, Args&&... args) {
  log_info(fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (verbosity() == Verbosity::Verbose) log_debug(fmt::format(f, std::forward<Args>(args)...));
}

// Progress of `total` units of `what` ("runs", "combinations", "variants") on stderr: a line
// rewritten at most once per percent, e.g. "job: 412/2000 runs (20%)". Shown only when stderr is
// a terminal, not --quiet and not `json` (a script reading JSON has no use for it). Thread-safe:
// worker threads may report. The line is cleared when the reporter goes away.
class Progress {
 public:
  Progress(std::string label, std::string what, std::size_t total, bool json = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(std::size_t done);
  // `done` of `total` as a lower layer counts them (the total may differ from the one given at
  // construction, e.g. job runs times the checkpoint intervals compared).
  void report(std::size_t done, std::size_t total);
  // For a lower layer: report() with the layer's own counts.
  std::function<void(int, int)> int_callback();
  std::function<void(std::size_t, std::size_t)> size_callback();
  void restart(std::string label);  // the next part of the work (one plan case after another), from 0 %
  bool shown() const { return enabled_; }
  // Seconds since the reporter was made.
  double seconds() const;

 private:
  void clear_line();
  std::string label_, what_;
  std::size_t total_;
  bool enabled_;
  std::mutex mutex_;
  int percent_ = -1;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace stepsim::cli
