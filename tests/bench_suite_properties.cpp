// `stepsim bench` on random small suites (random axes over schedules, a bundled interleaved value,
// stages, micro-batches, F:B:W time ratios, link latency, a dotted key; random base scenarios),
// each figure against another way of getting it:
// - the variant list against a cross product enumerated here (first axis outermost);
// - each variant's result against its scenario run alone: a scenario file written here from the
//   base's values with the variant's settings applied (time ratios worked out here, per stage),
//   read by parse_scenario and run by simulate_pipeline, as `stepsim run` does;
// - 1 and 2 jobs against each other, byte for byte;
// - the baseline comparison against the regressions and improvements worked out here from the two
//   result sets and the suite's tolerances.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/bench/bench_runner.hpp"
#include "cli/input/scenario.hpp"
#include "schedules/lowering/spec_error.hpp"

using namespace stepsim;
using namespace stepsim::cli;

namespace {

std::int64_t draw(std::mt19937_64& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

// The base scenario's values, kept here so that the oracle can write any variant's file.
struct Base {
  int stages = 4, microbatches = 8, virtual_stages = 0;
  std::string schedule = "1f1b";
  std::vector<Time> forward, backward, backward_input, backward_weight;  // per stage
  bool full = true, split = true;                                        // which backward keys it gives
  Time update = 0, latency = 0;
  std::int64_t activation_mib = 230, message_kib = 1024;
};

// An F:B:W ratio as written, with its terms in thousandths.
struct Ratio {
  std::string text;
  std::int64_t f, b, w;
};

// One value of an axis, as this test means it: a label and what it changes in a Base.
struct Value {
  std::string yaml;  // as written in the suite
  std::string label;
  std::string schedule;  // non-empty: sets the schedule (and virtual_stages for the bundle)
  int virtual_stages = 0;
  int stages = 0, microbatches = 0;
  std::optional<Ratio> ratio;
  std::optional<Time> latency;
  std::optional<std::int64_t> message_kib;
};

struct Axis {
  std::string name;
  std::vector<Value> values;
};

std::string ns_list(const std::vector<Time>& v) {
  std::vector<std::string> parts;
  for (Time t : v) parts.push_back(fmt::format("{}ns", t));
  return "[" + fmt::format("{}", fmt::join(parts, ", ")) + "]";
}

// Stage times, one value for every stage or one per stage.
std::vector<Time> stage_times(std::mt19937_64& rng, int stages, bool per_stage, std::int64_t lo, std::int64_t hi) {
  std::vector<Time> v(static_cast<std::size_t>(stages), draw(rng, lo, hi) * 100 * kMicrosecond);
  if (per_stage)
    for (Time& t : v) t = draw(rng, lo, hi) * 100 * kMicrosecond + draw(rng, 0, 999);
  return v;
}

// Backward times for `stages` stages from the base's first values (all stages alike), or its own.
void set_times(Base& b, std::mt19937_64& rng, bool per_stage) {
  b.forward = stage_times(rng, b.stages, per_stage, 10, 200);
  b.backward_input = stage_times(rng, b.stages, per_stage, 10, 200);
  b.backward_weight = stage_times(rng, b.stages, per_stage, 5, 200);
  b.backward.clear();
  for (std::size_t i = 0; i < b.forward.size(); ++i) b.backward.push_back(b.backward_input[i] + b.backward_weight[i]);
}

// The scenario file for `b`: every value written out here, in nanoseconds.
std::string scenario_text(const Base& b) {
  std::string t = fmt::format("name: base\npipeline:\n  stages: {}\n  microbatches: {}\n  schedule: {}\n", b.stages,
                              b.microbatches, b.schedule);
  if (b.virtual_stages > 0) t += fmt::format("  virtual_stages: {}\n", b.virtual_stages);
  const auto list = [&](const std::vector<Time>& v) {
    const bool alike = std::all_of(v.begin(), v.end(), [&](Time x) { return x == v.front(); });
    return alike ? fmt::format("{}ns", v.front()) : ns_list(v);
  };
  t += "  time:\n    forward: " + list(b.forward) + "\n";
  if (b.full) t += "    backward: " + list(b.backward) + "\n";
  if (b.split)
    t += "    backward_input: " + list(b.backward_input) + "\n    backward_weight: " + list(b.backward_weight) + "\n";
  t += fmt::format("    update: {}ns\n  link: {{latency: {}ns}}\n", b.update, b.latency);
  t += fmt::format("  memory: {{activation: {}MiB, message: {}KiB}}\n", b.activation_mib, b.message_kib);
  return t;
}

// A stage-count change keeps every stage's times alike (the suite only varies stages then).
void resize(std::vector<Time>& v, int stages) { v.assign(static_cast<std::size_t>(stages), v.front()); }

// Nearest ns, halves up: forward x term / f in exact integers.
Time ratio_share(Time forward, std::int64_t term, std::int64_t f) {
  const __int128 num = static_cast<__int128>(forward) * term * 2 + f;
  return static_cast<Time>(num / (2 * static_cast<__int128>(f)));
}

// The base with a variant's values applied, axis after axis (a later axis wins, as in the suite).
Base with_values(Base b, const std::vector<const Value*>& values) {
  std::optional<Ratio> ratio;
  for (const Value* v : values) {
    if (!v->schedule.empty()) {
      b.schedule = v->schedule;
      if (v->virtual_stages) b.virtual_stages = v->virtual_stages;
    }
    if (v->stages) {
      b.stages = v->stages;
      for (auto* times : {&b.forward, &b.backward, &b.backward_input, &b.backward_weight}) resize(*times, b.stages);
    }
    if (v->microbatches) b.microbatches = v->microbatches;
    if (v->latency) b.latency = *v->latency;
    if (v->message_kib) b.message_kib = *v->message_kib;
    if (v->ratio) ratio = v->ratio;
  }
  if (ratio) {  // from each stage's forward; all three backward keys given
    b.full = b.split = true;
    for (std::size_t i = 0; i < b.forward.size(); ++i) {
      b.backward_input[i] = ratio_share(b.forward[i], ratio->b, ratio->f);
      b.backward_weight[i] = ratio_share(b.forward[i], ratio->w, ratio->f);
      b.backward[i] = b.backward_input[i] + b.backward_weight[i];
    }
  }
  return b;
}

Value plain(const std::string& label) {
  Value v;
  v.yaml = label.find(':') == std::string::npos ? label : "'" + label + "'";
  v.label = label;
  return v;
}

// A few distinct values of `pool`, in random order.
template <class T>
std::vector<T> some(std::mt19937_64& rng, std::vector<T> pool, int most) {
  std::shuffle(pool.begin(), pool.end(), rng);
  const auto n = std::min<std::int64_t>(most, static_cast<std::int64_t>(pool.size()));
  pool.resize(static_cast<std::size_t>(draw(rng, 1, n)));
  return pool;
}

// An axis of plain values: `label` names each, `set` says what it changes.
template <class T, class Label, class Set>
Axis axis_of(const std::string& name, const std::vector<T>& xs, Label label, Set set) {
  Axis a{name, {}};
  for (const T& x : xs) {
    Value v = plain(label(x));
    set(v, x);
    a.values.push_back(v);
  }
  return a;
}

Axis schedule_axis(std::mt19937_64& rng) {
  const std::vector<std::string> names{"fill-drain", "1f1b",       "zb-h1",         "zb-h2",
                                       "dualpipe",   "dualpipe-v", "interleaved-v2"};
  Axis a = axis_of(
      "schedule", some(rng, names, 3), [](const std::string& s) { return s; },
      [](Value& v, const std::string& s) { v.schedule = s; });
  for (Value& v : a.values) {
    if (v.label != "interleaved-v2") continue;
    v.yaml = "{label: interleaved-v2, set: {schedule: interleaved-1f1b, virtual_stages: 2}}";
    v.schedule = "interleaved-1f1b";
    v.virtual_stages = 2;
  }
  return a;
}

const std::vector<Ratio> kRatios{{"1:1:1", 1000, 1000, 1000},    {"1:2:1", 1000, 2000, 1000},
                                 {"2:3:1", 2000, 3000, 1000},    {"3:1:2", 3000, 1000, 2000},
                                 {"1:1.5:0.5", 1000, 1500, 500}, {"1.5:2:0.25", 1500, 2000, 250},
                                 {"7:3:0", 7000, 3000, 0}};

Axis random_axis(std::mt19937_64& rng, int kind) {
  const auto num = [](int x) { return std::to_string(x); };
  switch (kind) {
    case 0: return schedule_axis(rng);
    case 1: return axis_of("stages", some<int>(rng, {2, 3, 4, 6, 8}, 3), num, [](Value& v, int s) { v.stages = s; });
    case 2:
      return axis_of("microbatches", some<int>(rng, {1, 2, 4, 6, 8, 12, 16}, 3), num,
                     [](Value& v, int m) { v.microbatches = m; });
    case 3:
      return axis_of(
          "time_ratio", some(rng, kRatios, 3), [](const Ratio& r) { return r.text; },
          [](Value& v, const Ratio& r) { v.ratio = r; });
    case 4:
      return axis_of(
          "latency", some<Time>(rng, {0, 250 * kMicrosecond, kMillisecond, 3 * kMillisecond}, 2),
          [](Time t) { return fmt::format("{}us", t / kMicrosecond); }, [](Value& v, Time t) { v.latency = t; });
    default:
      return axis_of(
          "pipeline.memory.message", some<int>(rng, {256, 1024, 4096}, 2),
          [](int kib) { return fmt::format("{}KiB", kib); }, [](Value& v, int kib) { v.message_kib = kib; });
  }
}

struct Draw {
  Base base;
  std::vector<Axis> axes;
  std::string tolerance_yaml;
  // Integer amounts and whole percents, so that "past tolerance" is decided exactly here.
  std::int64_t step_abs = 0, step_pct = 0, memory_abs = 0, memory_pct = 0, messages_abs = 0;
  double bubble_abs = 0, bubble_pct = 0;
};

// Tolerances as written, with the amounts this test reads them as.
void random_tolerances(std::mt19937_64& rng, Draw& d) {
  const int st = static_cast<int>(rng() % 4), bu = static_cast<int>(rng() % 3), me = static_cast<int>(rng() % 3);
  const int ms = static_cast<int>(rng() % 2);
  const char* st_text[] = {"0", "1ms", "2%", "500us"};
  const char* bu_text[] = {"0", "0.01", "5%"};
  const char* me_text[] = {"0", "1%", "100MiB"};
  d.step_abs = st == 1 ? kMillisecond : st == 3 ? 500 * kMicrosecond : 0;
  d.step_pct = st == 2 ? 2 : 0;
  d.bubble_abs = bu == 1 ? 0.01 : 0;
  d.bubble_pct = bu == 2 ? 5 : 0;
  d.memory_abs = me == 2 ? 100LL * 1024 * 1024 : 0;
  d.memory_pct = me == 1 ? 1 : 0;
  d.messages_abs = ms == 1 ? 2 : 0;
  d.tolerance_yaml = fmt::format("tolerance: {{step_time: {}, bubble_fraction: {}, peak_memory: {}, messages: {}}}\n",
                                 st_text[st], bu_text[bu], me_text[me], ms == 1 ? "2" : "0");
}

Draw random_draw(std::mt19937_64& rng) {
  Draw d;
  Base& b = d.base;
  b.stages = static_cast<int>(draw(rng, 2, 6));
  b.microbatches = static_cast<int>(draw(rng, 1, 12));
  b.schedule = std::vector<std::string>{"1f1b", "fill-drain", "zb-h1", "dualpipe-v"}[rng() % 4];
  std::vector<int> kinds{0, 1, 2, 3, 4, 5};
  std::shuffle(kinds.begin(), kinds.end(), rng);
  kinds.resize(static_cast<std::size_t>(draw(rng, 1, 4)));
  for (int k : kinds) d.axes.push_back(random_axis(rng, k));
  const bool stages_axis = std::any_of(d.axes.begin(), d.axes.end(), [](const Axis& a) { return a.name == "stages"; });
  set_times(b, rng, !stages_axis && rng() % 2 == 0);  // per-stage times only where the stage count stays
  const int backward_keys = static_cast<int>(rng() % 3);
  b.full = backward_keys != 1;
  b.split = backward_keys != 0;
  b.update = draw(rng, 0, 20) * 100 * kMicrosecond;
  b.latency = draw(rng, 0, 20) * 100 * kMicrosecond;
  b.activation_mib = draw(rng, 1, 500);
  b.message_kib = draw(rng, 0, 4096);
  random_tolerances(rng, d);
  return d;
}

std::string suite_text(const Draw& d) {
  std::string t = "name: random\nscenario: base.yaml\naxes:\n";
  for (const Axis& a : d.axes) {
    t += "  " + a.name + ":\n";
    for (const Value& v : a.values) t += "    - " + v.yaml + "\n";
  }
  return t + d.tolerance_yaml;
}

// The cross product, first axis outermost, enumerated by nested loops (recursion).
void product(const std::vector<Axis>& axes, std::size_t a, std::vector<const Value*>& at,
             std::vector<std::vector<const Value*>>& out) {
  if (a == axes.size()) {
    out.push_back(at);
    return;
  }
  for (const Value& v : axes[a].values) {
    at.push_back(&v);
    product(axes, a + 1, at, out);
    at.pop_back();
  }
}

// What `stepsim run` gives for one scenario file.
VariantResult run_alone(const std::string& text) {
  VariantResult r;
  const Scenario sc = parse_scenario(text, "alone.yaml");
  try {
    const PipelineRun run = simulate_pipeline(*sc.pipeline);
    r.step_time = run.stats.step_time;
    r.bubble_fraction = run.stats.bubble_fraction;
    r.forward_messages = run.stats.forward_messages;
    r.backward_messages = run.stats.backward_messages;
    for (const auto& dev : run.stats.devices) {
      r.peak_memory.push_back(dev.peak_memory);
      r.peak_resident.push_back(dev.peak_resident);
    }
  } catch (const SpecError& e) {
    r.status = VariantStatus::Skipped;
    r.reason = e.what();
  }
  return r;
}

void check_same(const VariantResult& got, const VariantResult& want) {
  CHECK(status_name(got.status) == std::string(status_name(want.status)));
  CHECK(got.reason == want.reason);
  CHECK(got.step_time == want.step_time);
  CHECK(got.bubble_fraction == want.bubble_fraction);
  CHECK(got.peak_memory == want.peak_memory);
  CHECK(got.peak_resident == want.peak_resident);
  CHECK(got.forward_messages == want.forward_messages);
  CHECK(got.backward_messages == want.backward_messages);
}

BenchResults run_bench(const BenchSuite& suite, unsigned jobs) {
  BenchResults r;
  r.suite = suite.identity();
  r.results = run_variants(prepare_variants(suite, shard_indices(suite.variant_count(), {}), {}, jobs), jobs);
  return r;
}

Settings settings_of(const std::vector<Axis>& axes, const std::vector<const Value*>& values) {
  Settings s;
  for (std::size_t a = 0; a < axes.size(); ++a) s.emplace_back(axes[a].name, values[a]->label);
  return s;
}

}  // namespace

TEST_CASE("random bench suites: each variant is its scenario run alone, in cross-product order, on 1 or 2 jobs",
          "[bench][properties]") {
  std::mt19937_64 rng(31337);
  std::size_t variants = 0, ok = 0, skipped = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Draw d = random_draw(rng);
    const std::string text = suite_text(d), base = scenario_text(d.base);
    INFO("trial " << trial << "\n" << text << base);
    const BenchSuite suite = parse_suite(text, "suite.yaml", base);
    std::vector<std::vector<const Value*>> expected;
    std::vector<const Value*> at;
    product(d.axes, 0, at, expected);
    REQUIRE(suite.variant_count() == expected.size());
    const BenchResults one = run_bench(suite, 1), two = run_bench(suite, 2);
    REQUIRE(one.results.size() == expected.size());
    CHECK(results_json_text(one) == results_json_text(two));
    CHECK(results_csv(one) == results_csv(two));
    for (std::size_t i = 0; i < expected.size(); ++i) {
      const Settings settings = settings_of(d.axes, expected[i]);
      INFO("variant " << i << ": " << settings_key(settings));
      CHECK(variant_at(suite, i).settings == settings);
      CHECK(one.results[i].index == i);
      CHECK(one.results[i].settings == settings);
      const VariantResult alone = run_alone(scenario_text(with_values(d.base, expected[i])));
      check_same(one.results[i], alone);
      check_same(two.results[i], alone);
      ok += alone.status == VariantStatus::Ok;
      skipped += alone.status == VariantStatus::Skipped;
    }
    variants += expected.size();
  }
  CHECK(ok > 100);
  CHECK(skipped > 5);  // some draws are refused by their schedule, and named
  CHECK(ok + skipped == variants);
}

namespace {

// Past tolerance, decided in integers: diff x 100 > amount x 100 + percent x baseline.
bool past(std::int64_t diff, std::int64_t baseline, std::int64_t amount, std::int64_t pct) {
  return static_cast<__int128>(diff) * 100 >
         static_cast<__int128>(amount) * 100 + static_cast<__int128>(pct) * baseline;
}

// Worse (sign +1) or better (sign -1) past tolerance in some metric; tolerances scale with the baseline.
bool moved(const Draw& d, const VariantResult& b, const VariantResult& c, int sign) {
  const auto step = [&](std::int64_t x, std::int64_t y, std::int64_t amount, std::int64_t pct) {
    return past(sign * (y - x), x, amount, pct);
  };
  bool any = step(b.step_time, c.step_time, d.step_abs, d.step_pct);
  const long double db = b.bubble_fraction, dc = c.bubble_fraction;
  any |= sign * (dc - db) > static_cast<long double>(d.bubble_abs) + d.bubble_pct / 100.0L * db;
  for (std::size_t k = 0; k < b.peak_memory.size(); ++k)
    any |= step(b.peak_memory[k], c.peak_memory[k], d.memory_abs, d.memory_pct);
  any |= step(b.forward_messages, c.forward_messages, d.messages_abs, 0);
  any |= step(b.backward_messages, c.backward_messages, d.messages_abs, 0);
  return any;
}

bool listed(const std::vector<std::string>& lines, const std::string& key) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(key + ": ", 0) == 0; });
}

// The base with one to three of its values changed: some variants move past tolerance, some not.
Base perturbed(Base b, std::mt19937_64& rng) {
  for (int k = 0, n = static_cast<int>(draw(rng, 1, 3)); k < n; ++k) {
    const Time delta = draw(rng, 0, 30) * 50 * kMicrosecond;
    switch (rng() % 7) {
      case 0: b.latency = draw(rng, 0, 30) * 100 * kMicrosecond; break;
      case 1: b.message_kib = draw(rng, 0, 4096); break;
      case 2: b.activation_mib = std::max<std::int64_t>(1, b.activation_mib + draw(rng, -3, 3)); break;
      case 3:
        for (Time& t : b.forward) t += delta;
        break;
      case 4: b.update = draw(rng, 0, 20) * 100 * kMicrosecond; break;
      case 5: b.microbatches = static_cast<int>(draw(rng, 1, 12)); break;
      default:
        for (std::size_t i = 0; i < b.backward.size(); ++i) b.backward_weight[i] += delta, b.backward[i] += delta;
    }
  }
  return b;
}

}  // namespace

TEST_CASE("random bench suites: the baseline comparison flags exactly the variants past tolerance",
          "[bench][properties]") {
  std::mt19937_64 rng(4711);
  std::size_t flagged = 0, passed = 0, better = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Draw d = random_draw(rng);
    const std::string text = suite_text(d), base = scenario_text(d.base), now = scenario_text(perturbed(d.base, rng));
    INFO("trial " << trial << "\n" << text << base << "now:\n" << now);
    const BenchSuite suite = parse_suite(text, "suite.yaml", base);
    const BenchResults before = run_bench(suite, 1), after = run_bench(parse_suite(text, "suite.yaml", now), 2);
    const Comparison c = compare_results(before, after, suite.tolerance);
    const Comparison same = compare_results(before, before, suite.tolerance);
    CHECK(same.regressions.empty());
    CHECK(same.improvements.empty());
    std::size_t compared = 0, regressions = 0, improvements = 0;
    for (std::size_t i = 0; i < before.results.size(); ++i) {
      const VariantResult &b = before.results[i], &a = after.results[i];
      INFO("variant " << b.key());
      const bool ran = b.status == VariantStatus::Ok, runs = a.status == VariantStatus::Ok;
      const bool worse = ran && (!runs || moved(d, b, a, +1)), improved = ran && runs && moved(d, b, a, -1);
      compared += ran && runs;
      regressions += worse;
      improvements += improved;
      CHECK(listed(c.regressions, b.key()) == worse);
      CHECK(listed(c.improvements, b.key()) == improved);
      flagged += worse;
      passed += ran && !worse;
      better += improved;
    }
    CHECK(c.compared == compared);
    const auto ok = [](const VariantResult& r) { return r.status == VariantStatus::Ok; };
    CHECK(same.compared == static_cast<std::size_t>(std::count_if(before.results.begin(), before.results.end(), ok)));
    CHECK(c.regressions.size() == regressions);
    CHECK(c.improvements.size() == improvements);
  }
  // Both answers occur often: the property can fail either way.
  CHECK(flagged > 30);
  CHECK(passed > 30);
  CHECK(better > 10);
}
