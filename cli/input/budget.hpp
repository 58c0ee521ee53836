#pragma once
// The work a scenario may ask for, checked before anything large is allocated (docs/limits.md):
// an estimate of the ops (and bytes) a scenario needs is compared with --max-ops and
// --max-memory, and input files are read with a size cap. A refusal is one line naming the
// estimate and the key to change, exit 2.
#include <cstdint>
#include <string>
#include <vector>

#include "cli/input/input.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"

namespace stepsim::cli {

// A scenario beyond the budget: "file:line: key: too large: ...". Exit code 2.
class TooLargeError : public InputError {
 public:
  using InputError::InputError;
};

struct Budget {
  std::int64_t max_ops = 0;     // simulated ops of one step, events of all job runs, ops of a suite
  std::int64_t max_memory = 0;  // bytes the estimate may reach
};

// Measured peak resident bytes per simulated op (graph, timeline, reports), rounded up.
inline constexpr std::int64_t kBytesPerOp = 400;
// The largest input file read (scenario, model files, CSV, JSON).
inline constexpr std::int64_t kMaxInputBytes = std::int64_t{64} << 20;

// Half the machine's physical memory, or half of `ulimit -v` when that is lower.
std::int64_t default_max_memory();
// A std::bad_alloc, said: a --max-memory raised past what this process may allocate (the memory,
// or ulimit -v) is the input's fault (exit 2); within the default (half of that) an estimate fell
// short (exit 1, a bug to report).
struct OutOfMemory {
  int exit_code = 1;
  std::string message;
};
OutOfMemory out_of_memory();
// Input-pipeline and RL workers are each simulated (their queues, pauses, batches): a million is
// far past any loader or rollout fleet.
inline constexpr std::int64_t kMaxWorkers = 1'000'000;
// 10^9: a bound on work (a few minutes); ops that hold memory are bounded by --max-memory too.
inline constexpr std::int64_t kDefaultMaxOps = 1'000'000'000;

// The budget in force (main() sets it from --max-ops / --max-memory; defaults as above).
const Budget& budget();
void set_budget(const Budget& b);
// The bits of the global options: removes `--max-ops N` and `--max-memory BYTES` (also with
// `=`) from `args` wherever they stand before a lone "--", and sets the budget.
void take_budget_flags(std::vector<std::string>& args);

// "" when `ops` simulated ops plus `extra_bytes` fit the budget, else the reason:
// "about 8.0e+09 ops and 3.2 TB, over --max-ops 100000000".
// `bytes_per_op` is kBytesPerOp for ops of a graph, 0 for events that hold no memory (job runs).
std::string over_budget(double ops, double extra_bytes = 0, double bytes_per_op = kBytesPerOp);
// Throws TooLargeError at `key` of `r` (or at file:line, for callers without a reader) when
// over_budget() says so: "too large: about ... ops ..., over --max-ops N: lower KEY or raise
// --max-ops".
void check_budget(const Reader& r, const std::string& key, double ops, double extra_bytes = 0,
                  double bytes_per_op = kBytesPerOp);
void check_budget(const std::string& file, int line, const std::string& key, double ops, double extra_bytes = 0);

// Throws TooLargeError at `key` of `r` (a dotted key from the root works too) with `message`.
[[noreturn]] void fail_too_large(const Reader& r, const std::string& key, const std::string& message);

// A pipeline section's size before its per-stage values are read and its schedule is built:
// stages x virtual stages (or the largest stage a custom action names) x micro-batches.
void check_pipeline_budget(const Reader& r, const PipelineSpec& spec);

}  // namespace stepsim::cli
