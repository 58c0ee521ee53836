#include "cli/input/budget.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "cli/input/input.hpp"
#include "models/units.hpp"
#include "schedules/lowering/pipeline/pipeline.hpp"

namespace stepsim::cli {

namespace {

Budget& current() {
  static Budget b = [] {
    Budget d;
    d.max_memory = default_max_memory();
    d.max_ops = kDefaultMaxOps;
    return d;
  }();
  return b;
}

// "3.2 GB": a size for a message (powers of 1000, one decimal).
std::string size_text(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  int u = 0;
  while (bytes >= 1000 && u < 6) {
    bytes /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

std::int64_t parse_count(const std::string& option, const std::string& text) {
  std::string error;
  const auto v = whole_number(text, 1, INT64_MAX, error);  // 2000000, 2e6 or 2M
  if (!v) throw InputError(option, 0, "", error);          // in the words of every count option
  return *v;
}

std::int64_t parse_memory(const std::string& option, const std::string& text) {
  std::string error;
  const auto b = parse_bytes(text, &error);
  if (!b) throw InputError(option, 0, "", fmt::format("'{}' is not a size like 4GB ({})", text, error));
  if (*b < 1) throw InputError(option, 0, "", fmt::format("'{}' is no memory: give a size like 4GB", text));
  return *b;
}

// The value of option `name` at args[i] ("--name V", advancing i, or "--name=V"); nullopt when
// args[i] is another word.
std::optional<std::string> option_value(const std::vector<std::string>& args, std::size_t& i, const std::string& name) {
  const std::string& a = args[i];
  if (a.rfind(name + "=", 0) == 0) return a.substr(name.size() + 1);
  if (a != name) return std::nullopt;
  if (i + 1 >= args.size()) throw InputError(name, 0, "", "needs a value");
  return args[++i];
}

}  // namespace

std::int64_t default_max_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  double mem = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 8e9;
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    mem = std::min(mem, static_cast<double>(as.rlim_cur));
  return static_cast<std::int64_t>(mem / 2);
}

OutOfMemory out_of_memory() {
  const auto limit = static_cast<double>(default_max_memory()) * 2;
  const std::int64_t asked = budget().max_memory;
  if (asked > default_max_memory())
    return {2, fmt::format("out of memory: --max-memory {} is more than this process may allocate ({}: the memory, "
                           "or ulimit -v): lower it, or make the scenario smaller",
                           size_text(static_cast<double>(asked)), size_text(limit))};
  return {1, fmt::format("out of memory within --max-memory {} (an estimate fell short: please report it)",
                         size_text(static_cast<double>(asked)))};
}

const Budget& budget() { return current(); }
void set_budget(const Budget& b) { current() = b; }

void take_budget_flags(std::vector<std::string>& args) {
  std::optional<std::int64_t> ops, memory;
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      kept.insert(kept.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    // Given twice, one would be dropped silently: refused, as a repeated count option is.
    const auto once = [](const auto& seen, const char* option) {
      if (seen) throw InputError(option, 0, "", "given twice: give it once");
    };
    if (auto v = option_value(args, i, "--max-ops")) {
      once(ops, "--max-ops");
      ops = parse_count("--max-ops", *v);
    } else if (auto m = option_value(args, i, "--max-memory")) {
      once(memory, "--max-memory");
      memory = parse_memory("--max-memory", *m);
    } else {
      kept.push_back(args[i]);
    }
  }
  args = std::move(kept);
  Budget b = budget();
  if (memory) b.max_memory = *memory;
  if (ops) b.max_ops = *ops;
  set_budget(b);
}

std::string over_budget(double ops, double extra_bytes, double bytes_per_op) {
  const Budget& b = budget();
  const double bytes = ops * bytes_per_op + extra_bytes;
  const bool too_many = ops > static_cast<double>(b.max_ops);
  if (!too_many && bytes <= static_cast<double>(b.max_memory)) return "";
  const std::string estimate = bytes_per_op > 0 || extra_bytes > 0
                                   ? fmt::format("about {:.2g} ops and {} of memory", ops, size_text(bytes))
                                   : fmt::format("about {:.2g} events", ops);
  return too_many ? fmt::format("{}, over --max-ops {}", estimate, b.max_ops)
                  : fmt::format("{}, over --max-memory {}", estimate, size_text(static_cast<double>(b.max_memory)));
}

void check_budget(const std::string& file, int line, const std::string& key, double ops, double extra_bytes) {
  const std::string why = over_budget(ops, extra_bytes);
  if (why.empty()) return;
  const std::string option = why.find("--max-ops") != std::string::npos ? "--max-ops" : "--max-memory";
  throw TooLargeError(file, line, key, fmt::format("too large: {}: make it smaller or raise {}", why, option));
}

void fail_too_large(const Reader& r, const std::string& key, const std::string& message) {
  try {
    if (key.find('.') != std::string::npos)
      r.fail_dotted(key, message);
    else
      r.fail(key, message);
  } catch (const InputError& e) { throw TooLargeError(e.file(), e.line(), e.key(), e.message()); }
}

void check_budget(const Reader& r, const std::string& key, double ops, double extra_bytes, double bytes_per_op) {
  const std::string why = over_budget(ops, extra_bytes, bytes_per_op);
  if (why.empty()) return;
  const std::string option = why.find("--max-ops") != std::string::npos ? "--max-ops" : "--max-memory";
  fail_too_large(r, key, fmt::format("too large: {}: make it smaller or raise {}", why, option));
}

void check_pipeline_budget(const Reader& r, const PipelineSpec& spec) {
  const double devices = std::max(spec.stages, 1), micro = std::max(spec.microbatches, 1);
  const double declared = devices * std::max(spec.virtual_stages, 1);
  double named = 0, actions = 0;  // custom actions: the largest stage they name (+ 1), their count
  for (const auto& list : spec.custom_actions) {
    actions += static_cast<double>(list.size());
    for (const Action& a : list) named = std::max({named, a.stage + 1.0, a.stage2 + 1.0});
  }
  const double stages = std::max(declared, named);
  if (devices > kMaxPipelineStages)
    r.fail("stages", fmt::format("{} is too many: a pipeline has at most {} devices", spec.stages, kMaxPipelineStages));
  // An action names at most stage kMaxPipelineStages - 1 (parse_action), so only the declared
  // virtual stages can pass the limit.
  if (stages > kMaxPipelineStages)
    r.fail("virtual_stages",
           fmt::format("{:.0f} virtual stages are too many: a pipeline has at most {}", stages, kMaxPipelineStages));
  // Per (stage, micro-batch): forward, backward (or its two halves) and the sends between stages.
  const double ops = 4 * stages * micro;
  // Per-device values, and for custom actions a vote per (stage, device) and a route per micro-batch.
  const double extra = 64 * devices + (named > 0 ? 4 * stages * (devices + micro) + 24 * actions : 0);
  const char* key = named > declared  ? (r.has("actions_csv") ? "actions_csv" : "actions")
                    : micro >= stages ? "microbatches"
                                      : "stages";
  check_budget(r, key, ops, extra);
}

}  // namespace stepsim::cli
