#pragma once
// The reinforcement-learning loop as plain values, and its closed-form model
// (reference section 6 / book section 10.5, figures 10-36, 10-41, 10-42).
//
// Three stages pass trajectories along: generation -> verification -> learning. The learner
// consumes batches and publishes a new policy version after each; the weight sync that
// delivers it blocks both the learner and the generators. The engine simulation lives in
// schedules/rl_loop_sim.hpp; the functions here are the formulas that simulation is checked
// against.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

// A duration that is fixed or drawn per use from a seeded distribution.
struct DurationDist {
  enum class Kind : std::uint8_t { Fixed, Uniform, Exponential };
  Kind kind = Kind::Fixed;
  Time a = 0;  // fixed: the value; uniform: low end; exponential: the mean
  Time b = 0;  // uniform: high end
  Time mean() const;
  bool random() const { return kind != Kind::Fixed; }
};

// Items per second, in millionths (exact for any decimal with up to 6 fraction digits).
using RatePpm = std::int64_t;
inline constexpr std::int64_t kPpm = 1'000'000;

// "12/s", "0.5/s", "30/min", "3600/h" -> items per second x 1e6.
std::optional<RatePpm> parse_rate(const std::string& text, std::string* error = nullptr);

// Part k of `total` cut into n parts that differ by at most 1 ns and add up exactly:
// floor((k+1) total / n) - floor(k total / n). No float ever accumulates into a Time.
Time even_share(Time total, std::int64_t n, std::int64_t k);
// Time of the k-th item (0-based) of a worker running at `rate`: even shares of 1 s / rate.
Time rate_item_time(RatePpm rate, std::int64_t k);
// Whether item i is kept when a fraction kept_ppm/1e6 is kept, spread evenly
// (error diffusion: exactly floor(n q) of the first n items are kept).
bool kept_evenly(std::int64_t i, std::int64_t kept_ppm);

enum class RlMode : std::uint8_t { Synchronous, Asynchronous };
enum class WeightUpdates : std::uint8_t { BetweenBatches, InFlight };
enum class Interrupted : std::uint8_t { Discard, Resume };

// How long one stage takes. Exactly one of rate / batch_time / length is set (length only for
// generation). Rates and batch times describe ONE worker: doubling workers doubles capacity.
struct RlStageSpec {
  int workers = 0;                         // 0 = the stage is absent (verification only)
  std::optional<RatePpm> rate;             // items per second per worker
  std::optional<DurationDist> batch_time;  // generation/verification: one worker's time for all
                                           // trajectories of a batch; learning: time per batch
  std::optional<DurationDist> length;      // generation: time of each trajectory (drawn per id)
  Time chunk = 0;                          // generation: weight updates are applied between chunks of this length
  bool present() const { return workers > 0; }
};

struct RlLoopSpec {
  std::string name;  // variant label in reports
  RlMode mode = RlMode::Synchronous;
  int max_staleness = 1;  // asynchronous: generation may run this many batches ahead
  WeightUpdates updates = WeightUpdates::BetweenBatches;
  Interrupted interrupted = Interrupted::Discard;
  int batches = 1;
  int batch_size = 1;            // trajectories generated per batch
  std::int64_t kept_ppm = kPpm;  // fraction of verified trajectories the learner uses
  std::uint64_t seed = 1;
  RlStageSpec generation, verification, learning;
  Time sync = 0;  // weight sync: blocks the learner and every generator

  // Batches generation may run ahead of the learner: 0 when synchronous.
  int lead() const { return mode == RlMode::Synchronous ? 0 : max_staleness; }
};

// --- Closed-form model ------------------------------------------------------------------

// Figure 10-36: each stage's capacity expressed in trajectories per second reaching the learner
// (generation and verification capacity times the kept fraction; the learner's own rate).
// The loop delivers the minimum; the stage that attains it is the bottleneck.
struct FlowBound {
  std::vector<double> capacity;  // generation, verification (0 if absent), learning
  double learner_rate = 0;
  int bottleneck = -1;  // index into capacity, -1 if no stage has a rate
};
// Only stages given as rates contribute; returns nullopt if the spec has none to compare.
std::optional<FlowBound> flow_bound(const RlLoopSpec& spec);
const char* stage_name(int index);  // 0 generation, 1 verification, 2 learning

// Figures 10-41 / 10-42: time per batch with generation G, learning L and a sync S that blocks
// both sides. Synchronous: G + L + S. Asynchronous (generation of the next batch overlaps the
// learning of the last): max(G, L) + S.
Time synchronous_period(Time generation, Time learning, Time sync);
Time asynchronous_period(Time generation, Time learning, Time sync);
// Asynchronous keeps a fraction q of its trajectories, synchronous all: async delivers more
// when q B / P_async > B / P_sync, i.e. q > P_async / P_sync (44/60 = 11/15 in the book).
struct Fraction {
  std::int64_t num, den;
};
Fraction async_break_even(Time sync_period, Time async_period);  // reduced
// The stage times per batch the formulas take, from a spec: generation's (or verification's,
// if slower: it overlaps generation trajectory by trajectory) and learning's wall time for one
// batch with the work split evenly over the workers, mean durations for random ones.
struct BatchTimes {
  Time generation = 0, learning = 0;
  std::int64_t learned = 0;  // trajectories the learner uses per batch (batch x kept, rounded down)
};
BatchTimes batch_times(const RlLoopSpec& spec);
// The formula above for the spec's mode, and the learner's rate it implies. With in-flight
// updates and interrupted trajectories discarded, the learner keeps on average the expected
// survival of a trajectory, updates arriving once per period (lambda = 1 / period).
Time model_period(const RlLoopSpec& spec);
double model_learner_rate(const RlLoopSpec& spec);
// Kept trajectories per second: batch x kept / period.
double effective_throughput(int batch_size, double kept, Time period);

// Section 10.5: with weight updates arriving as a Poisson process of rate lambda (per second),
// a trajectory that takes t seconds completes without an update with probability e^(-lambda t).
double survival_probability(double seconds, double lambda_per_s);
// Discarding interrupted trajectories keeps lengths with density f(t) e^(-lambda t). For
// exponential lengths of mean m that is again exponential, of mean m / (1 + lambda m).
double mean_kept_length_discarding(double mean_s, double lambda_per_s);
// E[e^(-lambda T)] over trajectory times T: e^(-lambda t) fixed, 1 / (1 + lambda m) exponential,
// (e^(-lambda a) - e^(-lambda b)) / (lambda (b - a)) uniform on [a, b].
double expected_survival(const DurationDist& length, double lambda_per_s);

}  // namespace stepsim
