#include "cli/commands/diagnostics.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace stepsim::cli {

namespace {

Verbosity g_verbosity = Verbosity::Normal;
std::atomic<bool> g_progress_line{false};  // a progress line is on the terminal: clear it before a message

void clear_progress_line() {
  if (g_progress_line.exchange(false)) std::fputs("\r\033[K", stderr);
}

// "%*": the level as a prefix people read ("warning: "), nothing for plain notes.
class LevelPrefix : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string_view prefix;
    switch (msg.level) {
      case spdlog::level::warn: prefix = "warning: "; break;
      case spdlog::level::err:
      case spdlog::level::critical: prefix = "error: "; break;
      case spdlog::level::debug:
      case spdlog::level::trace: prefix = "debug: "; break;
      default: break;
    }
    dest.append(prefix.data(), prefix.data() + prefix.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LevelPrefix>(); }
};

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> log = [] {
    auto l = std::make_shared<spdlog::logger>("stepsim", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    auto f = std::make_unique<spdlog::pattern_formatter>();
    f->add_flag<LevelPrefix>('*').set_pattern("%*%v");
    l->set_formatter(std::move(f));
    l->set_level(spdlog::level::info);
    l->flush_on(spdlog::level::trace);  // stderr lines appear in order with stdout's
    return l;
  }();
  return *log;
}

bool stderr_is_terminal() { return isatty(fileno(stderr)) != 0; }

}  // namespace

void set_verbosity(Verbosity v) {
  g_verbosity = v;
  logger().set_level(v == Verbosity::Quiet     ? spdlog::level::err
                     : v == Verbosity::Verbose ? spdlog::level::debug
                                               : spdlog::level::info);
}

Verbosity verbosity() { return g_verbosity; }

void log_warning(const std::string& message) {
  clear_progress_line();
  logger().warn(message);
}
void log_info(const std::string& message) {
  clear_progress_line();
  logger().info(message);
}
void log_debug(const std::string& message) {
  clear_progress_line();
  logger().debug(message);
}

Progress::Progress(std::string label, std::string what, std::size_t total, bool json)
    : label_(std::move(label)),
      what_(std::move(what)),
      total_(total),
      enabled_(!json && g_verbosity != Verbosity::Quiet && total > 0 && stderr_is_terminal()),
      started_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  std::lock_guard<std::mutex> lock(mutex_);
  clear_line();
}

void Progress::clear_line() {
  if (enabled_ && percent_ >= 0) clear_progress_line();
  percent_ = -1;
}

void Progress::update(std::size_t done) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const int percent = static_cast<int>(100 * std::min(done, total_) / total_);
  if (percent <= percent_) return;
  percent_ = percent;
  fmt::print(stderr, "\r\033[K{}: {}/{} {} ({}%)", label_, done, total_, what_, percent);
  std::fflush(stderr);
  g_progress_line = true;
}

void Progress::report(std::size_t done, std::size_t total) {
  if (!enabled_ || total == 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    total_ = total;
  }
  update(done);
}

std::function<void(int, int)> Progress::int_callback() {
  return [this](int done, int total) {
    if (done >= 0 && total > 0) report(static_cast<std::size_t>(done), static_cast<std::size_t>(total));
  };
}

std::function<void(std::size_t, std::size_t)> Progress::size_callback() {
  return [this](std::size_t done, std::size_t total) { report(done, total); };
}

void Progress::restart(std::string label) {
  std::lock_guard<std::mutex> lock(mutex_);
  clear_line();
  label_ = std::move(label);
  started_ = std::chrono::steady_clock::now();
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

}  // namespace stepsim::cli
