// The capacity and deadline planner on random plans (Qwen3-8B and tiny shapes, models given by counts,
// given workspaces; every ZeRO stage, recompute policy, state format and accelerator). Each figure is checked
// against another way of getting it or against a second run:
//  * memory: the peak against a direct count of the buffers live at each op of the plan's own sequence; the
//    peak's parts against the peak; each card's share of a sharded array against the whole array;
//    ZeRO stages and more cards never raise the memory (where no transient buffer is added), the levers'
//    fewest cards against plans at that count and one fewer;
//  * time: steps and micro-batches against the tokens and the batch they must cover; the busiest card
//    against the step's FLOPs spread evenly; Young's interval against L(tau) at other intervals; meets
//    against the step budget; the efficiency needed and the room for communication against runs at
//    just above and below them; completion never later with a faster step, fewer failures, a cheaper
//    checkpoint, fewer tokens, and shifted by exactly a change of the reserve;
//  * a case against its overrides written into the shared inputs (with_case) and evaluated as a
//    bare case; a sweep's points against each evaluated alone, on one and two threads; a second
//    evaluation against the first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "models/plan.hpp"
#include "models/plan_sweep.hpp"

using namespace stepsim;

namespace {

constexpr Time kDay = 86400 * kSecond;
constexpr Bytes kGiB = Bytes{1} << 30;

std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> xs) {
  return *(xs.begin() + static_cast<std::ptrdiff_t>(rng() % xs.size()));
}

void random_model(std::mt19937_64& rng, PlanSpec& s) {
  const int kind = static_cast<int>(rng() % 3);
  if (kind < 2) {
    s.model.shape = *find_transformer(kind == 0 ? "qwen3-8b" : "tiny");
    s.model.name = s.model.shape->name;
    s.model.parameters = count_parameters(*s.model.shape).total;
  } else {  // given by counts (the resource-bill chapter's way)
    s.model.name = "counts";
    s.model.parameters = draw(rng, 100'000, 100'000'000'000LL);
    s.model.layers = static_cast<int>(draw(rng, 1, 48));
    s.model.width = draw(rng, 16, 8192);
    s.model.saved_arrays = static_cast<int>(draw(rng, 1, 16));
    s.flops_per_token = 6.0 * static_cast<double>(s.model.parameters);
  }
  const RecomputeKind k = s.model.shape ? pick(rng, {RecomputeKind::None, RecomputeKind::Selective,
                                                     RecomputeKind::Full, RecomputeKind::Keep})
                                        : pick(rng, {RecomputeKind::None, RecomputeKind::Full, RecomputeKind::Keep});
  s.recompute = RecomputePolicy{k, k == RecomputeKind::Keep ? static_cast<int>(draw(rng, 1, 5)) : 0};
}

void random_task(std::mt19937_64& rng, PlanSpec& s) {
  s.sequence = pick<std::int64_t>(rng, {128, 512, 2048, 8192});
  s.microbatch_sequences = pick(rng, {1, 2, 4});
  s.sequences_per_step = s.microbatch_sequences * draw(rng, 1, 512);
  if (rng() % 6 == 0) return;  // a memory-only plan
  const std::int64_t tps = s.tokens_per_step();
  // Mostly whole or partial last steps; now and then a task too long for 292 years of time.
  const std::int64_t steps = rng() % 30 == 0 ? draw(rng, 1'000'000'000, 10'000'000'000LL) : draw(rng, 1, 50'000);
  s.tokens = steps * tps - draw(rng, 0, tps - 1);
  // From an hour to 200 days, evenly on a log scale: plans that meet and plans that miss.
  const double hours = std::pow(4800.0, static_cast<double>(draw(rng, 0, 1000)) / 1000.0);
  s.deadline = static_cast<Time>(hours * 3600.0) * kSecond;
  s.reserved = s.deadline / 100 * draw(rng, 0, 50);
}

void random_memory(std::mt19937_64& rng, PlanSpec& s) {
  s.format = StateFormat{pick(rng, {1, 2, 4}), pick(rng, {2, 4}), pick(rng, {2, 4}), pick(rng, {0, 2, 4}),
                         pick(rng, {0, 2, 4})};
  s.zero_stage = static_cast<int>(draw(rng, 0, 3));
  if (rng() % 3 == 0) s.workspace = draw(rng, 1, 40) * kGiB / 2;
  s.activation_bytes = pick(rng, {1, 2, 4});
  s.logit_bytes = pick(rng, {2, 4});
  s.prefetch = static_cast<int>(draw(rng, 0, 3));
  s.margin = static_cast<double>(draw(rng, 0, 50)) / 100.0;
}

void random_step_and_checkpoint(std::mt19937_64& rng, PlanSpec& s) {
  s.efficiency = static_cast<double>(draw(rng, 5, 100)) / 100.0;
  s.exposed_comm = draw(rng, 0, 2000) * kMillisecond;
  s.input_wait = draw(rng, 0, 1000) * kMillisecond;
  if (rng() % 4 == 0) s.straggler_sigma = static_cast<double>(draw(rng, 1, 10)) / 100.0;
  if (rng() % 3 == 0) s.checkpoint_bytes = draw(rng, 1, 500) * 1'000'000'000LL;
  s.storage_bandwidth = draw(rng, 1, 50) * 1'000'000'000LL;
  s.restore = draw(rng, 0, 600) * kSecond;
  if (rng() % 2 == 0) s.interval = draw(rng, 60, 7200) * kSecond;
  s.card_mtbf = draw(rng, 30, 2000) * kDay;
  if (rng() % 4 == 0) s.rollback_every = draw(rng, 1, 30) * kDay;
}

PlanSpec random_spec(std::mt19937_64& rng) {
  PlanSpec s;
  random_model(rng, s);
  s.accelerator = *find_accelerator(pick<const char*>(rng, {"a100", "h100", "b200", "rtx4090"}));
  s.usable = s.accelerator.usable_memory;
  s.link_bandwidth = s.accelerator.host_link;
  s.cards_per_host = pick(rng, {4, 8});
  random_task(rng, s);
  random_memory(rng, s);
  random_step_and_checkpoint(rng, s);
  return s;
}

// A case with some of the shared inputs overridden.
PlanCase random_case(std::mt19937_64& rng, const PlanSpec& s) {
  PlanCase c = cards_case(static_cast<int>(draw(rng, 1, s.timed() ? s.max_cards() : 1024)));
  if (rng() % 3 == 0) c.efficiency = static_cast<double>(draw(rng, 5, 100)) / 100.0;
  if (rng() % 3 == 0) c.exposed_comm = draw(rng, 0, 5000) * kMillisecond;
  if (rng() % 3 == 0) c.input_wait = draw(rng, 0, 1000) * kMillisecond;
  if (rng() % 3 == 0) c.zero_stage = static_cast<int>(draw(rng, 0, 3));
  if (rng() % 4 == 0) c.recompute = RecomputePolicy{RecomputeKind::Full, 0};
  return c;
}

// The stand-in communication of these very inputs: the path the CLI takes without a simulation.
PlanResult eval(const PlanSpec& s, int cards) { return evaluate_plan(s, cards_case(cards), {}); }

// Two evaluations of what should be the same plan.
void check_same(const PlanResult& a, const PlanResult& b) {
  CHECK(a.memory.peak.peak == b.memory.peak.peak);
  CHECK(a.memory.planned == b.memory.planned);
  CHECK(a.microbatches_per_card == b.microbatches_per_card);
  CHECK(a.ok() == b.ok());
  REQUIRE(a.time.has_value() == b.time.has_value());
  if (!a.time) return;
  CHECK(a.time->step == b.time->step);
  CHECK(a.time->comm.exposed == b.time->comm.exposed);
  CHECK(a.time->interval == b.time->interval);
  CHECK(a.time->completion == b.time->completion);
  CHECK(a.time->budget == b.time->budget);
}

// The peak against a direct count over the plan's own sequence: a buffer is live from its first op's
// start to its last op's end, so at op k exactly those with from <= k <= until are live.
void check_peak_by_counting(const MemoryPlan& m) {
  const MemorySequence& seq = m.sequence;
  Bytes most = -1;
  std::size_t at = 0;
  for (std::size_t k = 0; k < seq.ops().size(); ++k) {
    Bytes live = 0;
    for (const LiveBuffer& b : seq.buffers())
      if (b.from_op <= k && k <= b.until_op) live += b.bytes;
    if (live > most) {
      most = live;
      at = k;
    }
  }
  CHECK(m.peak.peak == most);
  CHECK(m.peak.at_op == at);
  Bytes listed = 0;
  for (std::size_t i : m.peak.live) listed += seq.buffers()[i].bytes;
  CHECK(listed == m.peak.peak);
  CHECK(m.peak.resident + m.peak.activations + m.peak.buffers == m.peak.peak);
  CHECK(m.peak.resident == m.resident.total());  // the state stays for the whole step
  CHECK(m.planned >= m.peak.peak);
}

// One card's share of an array of `whole` bytes (`per_param` bytes each) over `d` cards: all of it
// unsharded; sharded, the d shares cover it, with less than one parameter each to spare.
void check_share(Bytes share, std::int64_t params, int per_param, bool sharded, int d) {
  const Bytes whole = params * per_param;
  if (!sharded) {
    CHECK(share == whole);
    return;
  }
  CHECK(share * d >= whole);
  CHECK(share * d - whole < static_cast<Bytes>(d) * per_param);
}

void check_memory(const PlanSpec& s, int cards, const MemoryPlan& m) {
  check_peak_by_counting(m);
  const int z = s.zero_stage;
  check_share(m.resident.optimizer, s.model.parameters, s.format.optimizer(), z >= 1, cards);
  check_share(m.resident.gradients, s.model.parameters, s.format.gradients, z >= 2, cards);
  check_share(m.resident.weights, s.model.parameters, s.format.weights, z >= 3, cards);
  if (s.margin == 0) CHECK(m.planned == m.peak.peak);
}

// ZeRO stages and card counts. Stage 1 adds no transient buffer, so it never raises the peak; stages 2
// and 3 add unsharded layer gradients and gathered layers (prefetched ahead), which on few cards may
// outweigh what sharding saves, so there only the resident state must not grow, except with a given
// workspace (no transients). More cards shrink only sharded state.
void check_memory_relations(std::mt19937_64& rng, const PlanSpec& s, int cards) {
  Bytes resident_before = INT64_MAX, peak_before = INT64_MAX;
  for (int z = 0; z <= 3; ++z) {
    PlanSpec t = s;
    t.zero_stage = z;
    const MemoryPlan m = plan_memory(t, cards);
    INFO("ZeRO-" << z);
    CHECK(m.resident.total() <= resident_before);
    if (z <= 1 || s.workspace) CHECK(m.peak.peak <= peak_before);
    resident_before = m.resident.total();
    peak_before = m.peak.peak;
  }
  const MemoryPlan now = plan_memory(s, cards);
  const int more = cards + static_cast<int>(draw(rng, 1, 64));
  const MemoryPlan then = plan_memory(s, more);
  if (s.zero_stage == 0) CHECK(then.peak.peak == now.peak.peak);
  CHECK(then.peak.peak <= now.peak.peak);
  if (now.fits()) return;
  // The levers' fewest cards: they fit, one fewer does not (now does not, so one fewer is >= cards).
  const MemoryLevers lv = memory_levers(s, cards);
  CHECK(lv.over == now.planned - now.usable);
  const int limit = s.timed() ? s.max_cards() : (1 << 20);
  if (lv.cards) {
    CHECK(plan_memory(s, *lv.cards).fits());
    CHECK_FALSE(plan_memory(s, *lv.cards - 1).fits());
    CHECK(*lv.cards <= limit);
  } else if (cards < limit) {
    CHECK_FALSE(plan_memory(s, limit).fits());
  }
}

// Figures of one timed plan against what they must cover.
void check_time_figures(const PlanSpec& s, const PlanResult& r) {
  const TimePlan& t = *r.time;
  const std::int64_t tps = s.tokens_per_step();
  CHECK(t.steps * tps >= s.tokens);
  CHECK((t.steps - 1) * tps < s.tokens);
  const std::int64_t round = static_cast<std::int64_t>(r.cards) * s.microbatch_sequences;
  CHECK(r.microbatches_per_card * round >= s.sequences_per_step);
  CHECK((r.microbatches_per_card - 1) * round < s.sequences_per_step);
  CHECK(r.uneven == (r.microbatches_per_card * round != s.sequences_per_step));
  // The busiest card does at least the average share; exactly it when the batch divides evenly, and
  // then compute is the book's FLOPs_step / (cards x peak x efficiency).
  CHECK(t.flops_per_card * r.cards >= t.flops_per_step * (1 - 1e-12));
  if (!r.uneven) {
    const double book = t.flops_per_step / (r.cards * s.accelerator.peak_bf16_flops * r.efficiency) * 1e9;
    CHECK(static_cast<double>(t.compute) == Approx(book).epsilon(1e-12).margin(1));
  }
  CHECK(t.plain_budget >= t.budget);
  CHECK(t.completion >= s.reserved + t.base_training);
  CHECK(t.overhead.total() >= 0);
}

// Young's interval is the minimum of L(tau): no other interval, near or far, costs less.
void check_young(const PlanSpec& s, const PlanResult& r) {
  const TimePlan& t = *r.time;
  const Interruptions job{s.card_mtbf, r.cards, s.rollback_every};
  const Time best = t.optimal_interval;
  REQUIRE(best > 0);
  REQUIRE(best < INT64_MAX / 1024);
  const double at_best = checkpoint_overhead(t.checkpoint, best, job).total();
  for (double f : {1 - 1e-3, 1 + 1e-3, 0.9, 1.1, 0.5, 1.5, 1.0 / 64, 64.0}) {
    const Time tau = std::max<Time>(1, static_cast<Time>(static_cast<double>(best) * f));
    INFO("tau* x " << f);
    CHECK(checkpoint_overhead(t.checkpoint, tau, job).total() >= at_best);
  }
}

// Meets agrees with the step budget: a step clearly under it meets, one clearly over it misses
// (the margins cover the rounding of the budget and of the completion to nanoseconds).
void check_budget(const PlanResult& r) {
  const TimePlan& t = *r.time;
  const Time slack = 1 + t.budget / 1'000'000'000;
  if (t.step + slack <= t.budget) CHECK(t.meets());
  if (t.step >= t.budget + slack) CHECK_FALSE(t.meets());
}

// The efficiency needed and the room for communication, against runs just either side of them.
void check_thresholds(const PlanSpec& s, const PlanResult& r) {
  const TimePlan& t = *r.time;
  const double need = t.efficiency_needed;
  const Time slack = 1 + t.budget / 1'000'000'000;
  if (std::isfinite(need) && need > 0) {
    // Far enough either side that the step moves by many times the rounding slack.
    const double step = 1e-3 + 16.0 * static_cast<double>(slack) / static_cast<double>(t.budget - t.comm.exposed -
                                                                                          t.input_wait);
    PlanSpec above = s, below = s;
    above.efficiency = need * (1 + step);
    below.efficiency = need * (1 - step);
    if (above.efficiency <= 1) CHECK(eval(above, r.cards).time->meets());
    if (below.efficiency > 0) CHECK_FALSE(eval(below, r.cards).time->meets());
  } else {
    CHECK(need == std::numeric_limits<double>::infinity());
    PlanSpec best = s;
    best.efficiency = 1;
    CHECK_FALSE(eval(best, r.cards).time->meets());
  }
  PlanSpec more = s, less = s;
  more.exposed_comm = std::max<Time>(0, t.comm_may_grow_to) + slack;
  CHECK_FALSE(eval(more, r.cards).time->meets());
  if (t.comm_may_grow_to >= slack) {
    less.exposed_comm = t.comm_may_grow_to - slack;
    CHECK(eval(less, r.cards).time->meets());
  }
}

// A change that can only help never makes the run finish later (and the step never longer).
void check_never_later(std::mt19937_64& rng, const PlanSpec& s, const PlanResult& r) {
  const TimePlan& t = *r.time;
  const auto completion = [&](const PlanSpec& x) { return eval(x, r.cards).time->completion; };
  PlanSpec faster = s;
  faster.efficiency = std::min(1.0, s.efficiency * (1 + static_cast<double>(draw(rng, 1, 100)) / 100.0));
  faster.exposed_comm = s.exposed_comm / draw(rng, 1, 4);
  faster.input_wait = s.input_wait / draw(rng, 1, 4);
  const PlanResult f = eval(faster, r.cards);
  CHECK(f.time->step <= t.step);
  CHECK(f.time->completion <= t.completion);
  PlanSpec sturdier = s;  // fewer failures, and rollbacks (if any) rarer
  sturdier.card_mtbf = s.card_mtbf * draw(rng, 2, 10);
  if (s.rollback_every) sturdier.rollback_every = *s.rollback_every * 2;
  CHECK(completion(sturdier) <= t.completion);
  PlanSpec cheaper = s;  // a faster store, a smaller checkpoint, a quicker restore
  cheaper.storage_bandwidth = s.storage_bandwidth * draw(rng, 1, 8);
  cheaper.checkpoint_bytes = t.checkpoint_bytes / draw(rng, 1, 8);
  cheaper.restore = s.restore / draw(rng, 1, 8);
  CHECK(completion(cheaper) <= t.completion);
  PlanSpec shorter = s;
  shorter.tokens = std::max<std::int64_t>(1, s.tokens - draw(rng, 0, s.tokens));
  CHECK(completion(shorter) <= t.completion);
  PlanSpec fixed = s;  // any given interval costs at least Young's
  fixed.interval = draw(rng, 1, 20'000) * kSecond;
  PlanSpec young = s;
  young.interval.reset();
  CHECK(completion(fixed) >= completion(young));
  PlanSpec rolling = s;  // a rollback more often than before adds interruptions
  rolling.rollback_every = std::min(s.rollback_every.value_or(INT64_MAX), draw(rng, 1, 30) * kDay);
  CHECK(completion(rolling) >= t.completion);
}

// Two runs whose completions are tied: a longer reserve shifts it by exactly that much; twice the
// steps (tokens a whole number of steps) take twice the training time.
void check_shifts(std::mt19937_64& rng, const PlanSpec& s, const PlanResult& r) {
  const TimePlan& t = *r.time;
  PlanSpec later = s;
  later.reserved = s.reserved + draw(rng, 1, 30) * kDay;
  later.deadline = s.deadline + (later.reserved - s.reserved);
  const PlanResult l = eval(later, r.cards);
  CHECK(l.time->completion - t.completion == later.reserved - s.reserved);
  CHECK(l.time->meets() == t.meets());
  PlanSpec whole = s, twice = s;
  whole.tokens = t.steps * s.tokens_per_step();
  twice.tokens = 2 * whole.tokens;
  const TimePlan a = *eval(whole, r.cards).time, b = *eval(twice, r.cards).time;
  CHECK(a.steps == t.steps);
  CHECK(b.steps == 2 * a.steps);
  CHECK(static_cast<double>(b.completion - s.reserved) ==
        Approx(2.0 * static_cast<double>(a.completion - s.reserved)).epsilon(1e-12).margin(2));
}

// A random value for a sweep axis.
SweepValue sweep_value(std::mt19937_64& rng, const std::string& key, const PlanSpec& s) {
  SweepValue v;
  if (key == "cards") v.integer = draw(rng, 1, s.timed() ? s.max_cards() : 1024);
  if (key == "zero") v.integer = draw(rng, 0, 3);
  if (key == "efficiency") v.fraction = static_cast<double>(draw(rng, 5, 100)) / 100.0;
  if (key == "margin") v.fraction = static_cast<double>(draw(rng, 0, 50)) / 100.0;
  if (key == "straggler_sigma") v.fraction = static_cast<double>(draw(rng, 0, 10)) / 100.0;
  if (key == "exposed_comm" || key == "input_wait") v.integer = draw(rng, 0, 5000) * kMillisecond;
  if (key == "interval") v.integer = draw(rng, 60, 7200) * kSecond;
  if (key == "workspace") v.integer = draw(rng, 1, 40) * kGiB / 2;
  v.label = std::to_string(v.integer) + "/" + std::to_string(v.fraction);
  return v;
}

// A sweep point's inputs, written in by hand: the axis value replaces both the shared and the case's.
void set_by_hand(PlanSpec& s, PlanCase& c, const std::string& key, const SweepValue& v) {
  if (key == "cards") c.cards = static_cast<int>(v.integer);
  if (key == "zero") s.zero_stage = static_cast<int>(v.integer);
  if (key == "efficiency") s.efficiency = v.fraction;
  if (key == "margin") s.margin = v.fraction;
  if (key == "straggler_sigma") s.straggler_sigma = v.fraction;
  if (key == "exposed_comm") s.exposed_comm = v.integer;
  if (key == "input_wait") s.input_wait = v.integer;
  if (key == "zero") c.zero_stage.reset();
  if (key == "efficiency") c.efficiency.reset();
  if (key == "exposed_comm") c.exposed_comm.reset();
  if (key == "input_wait") c.input_wait.reset();
  if (key == "interval") s.interval = v.integer;
  if (key == "workspace") s.workspace = v.integer;
}

// A sweep's points against each combination evaluated alone, and on two threads against one.
void check_sweep(std::mt19937_64& rng, const PlanSpec& s, const PlanCase& base) {
  const std::vector<SweepKey>& keys = sweep_keys();
  const std::size_t first = rng() % keys.size(), second = (first + 1 + rng() % (keys.size() - 1)) % keys.size();
  std::vector<SweepAxis> axes;
  for (std::size_t k : {first, second}) {
    SweepAxis a{keys[k], {}};
    for (int n = static_cast<int>(draw(rng, 1, 3)); n > 0; --n) a.values.push_back(sweep_value(rng, keys[k].name, s));
    axes.push_back(a);
  }
  INFO("sweep " << axes[0].key.name << " x " << axes[1].key.name);
  const auto one = sweep_plan(s, base, axes, {}, {}, 1);
  const auto two = sweep_plan(s, base, axes, {}, {}, 2);
  REQUIRE(one.size() == axes[0].values.size() * axes[1].values.size());
  REQUIRE(two.size() == one.size());
  for (std::size_t n = 0; n < one.size(); ++n) {
    const std::size_t i = n / axes[1].values.size(), j = n % axes[1].values.size();  // last axis fastest
    CHECK(one[n].index == std::vector<std::size_t>{i, j});
    PlanSpec alone = s;
    PlanCase c = base;
    set_by_hand(alone, c, axes[0].key.name, axes[0].values[i]);
    set_by_hand(alone, c, axes[1].key.name, axes[1].values[j]);
    alone = with_case(alone, c);
    INFO("point " << n);
    check_same(one[n].result, evaluate_plan(alone, cards_case(c.cards), spec_step_comm(alone)));
    check_same(two[n].result, one[n].result);
  }
}

std::string describe(const PlanSpec& s, const PlanCase& c) {
  return s.model.name + " on " + s.accelerator.name + ", " + std::to_string(c.cards) + " cards, ZeRO-" +
         std::to_string(s.zero_stage) + ", recompute " + s.recompute.label() + (s.workspace ? ", workspace" : "") +
         ", tokens " + std::to_string(s.tokens) + ", batch " + std::to_string(s.sequences_per_step) + " x " +
         std::to_string(s.sequence) + ", interval " + (s.interval ? std::to_string(*s.interval) : "optimal");
}

}  // namespace

TEST_CASE("plans on random inputs: memory, steps, checkpoints and deadline against independent figures",
          "[plan][properties]") {
  std::mt19937_64 rng(1010);
  int ran = 0, refused = 0, timed = 0, met = 0, missed = 0, fit = 0;
  for (int trial = 0; ran < 250 && trial < 400; ++trial) {
    const PlanSpec spec = random_spec(rng);
    const PlanCase c = random_case(rng, spec);
    const PlanSpec s = with_case(spec, c);
    INFO("trial " << trial << ": " << describe(s, c));
    PlanResult r;
    try {
      r = evaluate_plan(spec, c, {});
    } catch (const OverflowError& e) {  // a figure past what stepsim holds: refused, naming it
      INFO(e.what());
      const std::string what = e.what();
      CHECK(what.rfind("too large: the ", 0) == 0);
      CHECK(what.find(" would exceed ") != std::string::npos);
      ++refused;
      continue;
    }
    ++ran;
    fit += r.memory.fits();
    check_memory(s, c.cards, r.memory);
    check_memory_relations(rng, s, c.cards);
    check_same(r, eval(s, c.cards));  // a case is the shared inputs with its overrides
    check_same(r, evaluate_plan(spec, c, {}));  // the same plan twice: the same figures
    if (trial % 8 == 0) check_sweep(rng, spec, c);
    if (!r.time) continue;
    ++timed;
    (r.time->meets() ? met : missed)++;
    CHECK(r.time->comm.exposed == s.exposed_comm);  // the case's own wait, not the shared one
    check_time_figures(s, r);
    check_young(s, r);
    check_budget(r);
    if (r.time->completion > INT64_MAX / 8) continue;  // a slower variant could pass the time limit
    check_thresholds(s, r);
    check_never_later(rng, s, r);
    check_shifts(rng, s, r);
  }
  CHECK(ran == 250);
  CHECK(refused > 0);  // the draws do reach tasks too long to hold
  CHECK(timed > 150);
  CHECK(met > 20);
  CHECK(missed > 20);
  CHECK(fit > 20);
  CHECK(fit < ran);
}
