// The RL loop, shared card and weight distribution (reference section 6 / book 10.5). Every
// figure is computed by the model or the engine from the inputs of the shipped scenarios; the
// book's printed values appear only as the expected results.
#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

#include "cli/input/input.hpp"
#include "cli/input/scenario.hpp"
#include "cli/reports/rl_report.hpp"
#include "models/random.hpp"
#include "models/rl_loop.hpp"
#include "models/rl_weights.hpp"
#include "schedules/lowering/rl/rl_run.hpp"

using namespace stepsim;

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

RlRun run_shipped(const std::string& name, cli::Scenario* out = nullptr) {
  const auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/" + name);
  REQUIRE(sc.rl);
  if (out) *out = sc;
  return simulate_rl(*sc.rl);
}

RlLoopSpec stages_spec(int gen_workers, int ver_workers) {
  RlLoopSpec s;
  s.mode = RlMode::Asynchronous;
  s.batches = 16;
  s.batch_size = 24;
  s.kept_ppm = 750'000;
  s.generation = {gen_workers, *parse_rate("12/s"), std::nullopt, std::nullopt, 0};
  s.verification = {ver_workers, *parse_rate("6/s"), std::nullopt, std::nullopt, 0};
  s.learning = {1, *parse_rate("8/s"), std::nullopt, std::nullopt, 0};
  return s;
}

std::string expect_input_error(const std::string& yaml) {
  try {
    cli::parse_scenario(yaml, "t.yaml");
  } catch (const cli::InputError& e) { return e.what(); }
  FAIL("no InputError for:\n" << yaml);
  return "";
}
}  // namespace

TEST_CASE("rates, even shares and the kept spread are exact integers", "[rl]") {
  CHECK(*parse_rate("12/s") == 12'000'000);
  CHECK(*parse_rate("0.5/s") == 500'000);
  CHECK(*parse_rate("30/min") == 500'000);
  CHECK_FALSE(parse_rate("12"));
  CHECK_FALSE(parse_rate("12/week"));
  CHECK_FALSE(parse_rate("0/s"));
  // 12 items at 12/s take exactly one second, though 1/12 s is not a whole number of ns.
  Time sum = 0;
  for (int k = 0; k < 12; ++k) sum += rate_item_time(12'000'000, k);
  CHECK(sum == kSecond);
  Time shares = 0;
  for (int k = 0; k < 7; ++k) shares += even_share(40 * kSecond, 7, k);
  CHECK(shares == 40 * kSecond);
  int kept = 0;
  for (int i = 0; i < 60; ++i) kept += kept_evenly(i, 700'000) ? 1 : 0;
  CHECK(kept == 42);
}

TEST_CASE("the random variates are seeded, portable and have the right means", "[rl]") {
  // std::mt19937_64's output is fixed by the standard: the 10000th word of the default seed.
  std::mt19937_64 reference;
  reference.discard(9999);
  CHECK(reference() == 9981545732273789042ull);
  Rng a(42), b(42);
  double sum = 0;
  int same = 0;
  for (int i = 0; i < 200'000; ++i) {
    const Time x = a.exponential(20 * kSecond);
    same += x == b.exponential(20 * kSecond) ? 1 : 0;
    sum += to_s(x);
  }
  CHECK(same == 200'000);
  CHECK(sum / 200'000 == Approx(20.0).epsilon(0.01));
  for (int i = 0; i < 1000; ++i) {
    const Time u = a.uniform(5, 9);
    CHECK((u >= 5 && u <= 9));
  }
}

TEST_CASE("figure 10-36: 12/6/8 trajectories/s with 75% kept, by the model", "[rl]") {
  const auto base = flow_bound(stages_spec(1, 1));
  REQUIRE(base);
  CHECK(base->learner_rate == Approx(4.5));  // book: 4.5/s at the learner
  CHECK(std::string(stage_name(base->bottleneck)) == "verification");
  const auto more_gen = flow_bound(stages_spec(2, 1));
  CHECK(more_gen->learner_rate == Approx(4.5));  // book: doubling generation gains nothing
  const auto more_ver = flow_bound(stages_spec(1, 2));
  CHECK(more_ver->learner_rate == Approx(8.0));  // book: the bottleneck moves to learning
  CHECK(std::string(stage_name(more_ver->bottleneck)) == "learning");
}

TEST_CASE("figure 10-36 on the engine: scenarios/rl-stages.yaml", "[rl]") {
  const RlRun run = run_shipped("rl-stages.yaml");
  REQUIRE(run.loops.size() == 3);
  const auto& base = run.loops[0].stats;
  CHECK(base.learner_rate == Approx(4.5).epsilon(1e-9));
  CHECK(base.period == 4 * kSecond);  // 18 kept trajectories per 4 s batch
  CHECK(std::string(stage_name(base.bottleneck)) == "verification");
  const auto& more_gen = run.loops[1].stats;
  CHECK(more_gen.learner_rate == Approx(4.5).epsilon(1e-9));
  CHECK(std::string(stage_name(more_gen.bottleneck)) == "verification");
  const auto& more_ver = run.loops[2].stats;
  CHECK(more_ver.learner_rate == Approx(8.0).epsilon(1e-9));
  CHECK(std::string(stage_name(more_ver.bottleneck)) == "learning");
  for (const auto& l : run.loops) {
    CHECK(l.stats.learner_rate == Approx(model_learner_rate(l.spec)).epsilon(1e-9));
    CHECK(l.stats.staleness.rbegin()->first <= l.spec.max_staleness);
  }
}

TEST_CASE("figures 10-41/42: synchronous 60 s, asynchronous 44 s, break-even 11/15", "[rl]") {
  // The formulas, from the figure's inputs.
  CHECK(synchronous_period(40 * kSecond, 16 * kSecond, 4 * kSecond) == 60 * kSecond);
  CHECK(asynchronous_period(40 * kSecond, 16 * kSecond, 4 * kSecond) == 44 * kSecond);
  const Fraction q = async_break_even(60 * kSecond, 44 * kSecond);
  CHECK(q.num == 11);
  CHECK(q.den == 15);

  // The engine, from scenarios/rl-sync-async.yaml.
  const RlRun run = run_shipped("rl-sync-async.yaml");
  REQUIRE(run.loops.size() == 4);
  const auto& sync = run.loops[0];
  const auto& async100 = run.loops[1];
  const auto& async80 = run.loops[2];
  const auto& async70 = run.loops[3];
  CHECK(sync.stats.period == 60 * kSecond);
  CHECK(async100.stats.period == 44 * kSecond);
  const Fraction measured = async_break_even(sync.stats.period, async100.stats.period);
  CHECK(measured.num == 11);
  CHECK(measured.den == 15);
  // Effective throughput: B/60 synchronous, qB/44 asynchronous (B = 60 trajectories).
  CHECK(sync.stats.learner_rate == Approx(effective_throughput(60, 1.0, 60 * kSecond)));
  CHECK(async80.stats.learner_rate == Approx(effective_throughput(60, 0.8, 44 * kSecond)));
  CHECK(async70.stats.learner_rate == Approx(effective_throughput(60, 0.7, 44 * kSecond)));
  CHECK(async80.stats.learner_rate > sync.stats.learner_rate);  // 80% > 11/15: async wins
  CHECK(async70.stats.learner_rate < sync.stats.learner_rate);  // 70% < 11/15: sync wins
  // Versions: synchronous trajectories are all on-policy, asynchronous ones at most one behind.
  CHECK(sync.stats.staleness.size() == 1);
  CHECK(sync.stats.staleness.begin()->first == 0);
  CHECK(async100.stats.staleness.rbegin()->first == 1);
  CHECK(async100.stats.staleness.at(0) == 60);  // only the first batch is on-policy
}

TEST_CASE("every trajectory has an id and the version that generated it", "[rl]") {
  const RlRun run = run_shipped("rl-sync-async.yaml");
  const auto& async = *run.loops[1].program;
  for (std::size_t i = 0; i < async.trajectories.size(); ++i) {
    const RlTrajectory& t = async.trajectories[i];
    CHECK(t.id == static_cast<int>(i));
    // One batch ahead: batch j is generated with version max(0, j - 1).
    CHECK(t.version_first == std::max(0, t.batch - 1));
    CHECK(t.version_last == t.version_first);
  }
}

TEST_CASE("in-flight updates: survival e^(-lambda t), discarding biases short, resuming does not", "[rl]") {
  const RlRun run = run_shipped("rl-interrupted.yaml");
  REQUIRE(run.loops.size() == 2);
  const auto& discard = run.loops[0].stats;
  const auto& resume = run.loops[1].stats;
  REQUIRE(discard.generated == 2000);
  // Same timeline (a discarded trajectory is still generated to its end), so the same interruptions.
  CHECK(discard.interrupted == resume.interrupted);
  CHECK(discard.interrupted > 0);
  const double lambda = discard.update_rate_per_s;
  CHECK(lambda == Approx(1.0 / 20).epsilon(0.15));  // learner steps: exponential, mean 20 s
  // Survival by length follows e^(-lambda t). Tolerance: 4 binomial standard errors of the bin's
  // share, plus 0.02 for the chunk granularity (a trajectory can slip through an update that
  // lands in its last chunk).
  for (const auto& bin : discard.survival) {
    if (bin.generated < 100) continue;
    const double se = std::sqrt(bin.model * (1.0 - bin.model) / bin.generated);
    CHECK(static_cast<double>(bin.survived) / bin.generated == Approx(bin.model).margin(4 * se + 0.02));
  }
  // Discarding keeps f(t) e^(-lambda t): mean m / (1 + lambda m), about half of m here.
  const double m = discard.mean_length_generated_s;
  CHECK(discard.mean_length_learned_s == Approx(mean_kept_length_discarding(m, lambda)).epsilon(0.1));
  CHECK(discard.mean_length_learned_s < 0.6 * m);
  // The learner keeps E[e^(-lambda T)] = 1 / (1 + lambda m) = 1/2 of them (the model's figure).
  CHECK(static_cast<double>(discard.learned) / discard.generated ==
        Approx(expected_survival(run.loops[0].spec.generation.length.value(), lambda)).epsilon(0.1));
  CHECK(model_learner_rate(run.loops[0].spec) == Approx(0.5 * model_learner_rate(run.loops[1].spec)));
  // Resuming keeps every trajectory, so the learned lengths are the generated ones.
  CHECK(resume.learned == resume.generated);
  CHECK(resume.mean_length_learned_s == Approx(m).epsilon(1e-12));
  // Interrupted and resumed trajectories carry more than one version.
  int spanning = 0;
  for (const auto& t : run.loops[1].program->trajectories) spanning += t.version_last > t.version_first ? 1 : 0;
  CHECK(spanning == resume.interrupted);
}

TEST_CASE("rl runs are deterministic: same input, same bytes", "[rl]") {
  cli::Scenario sc;
  const RlRun a = run_shipped("rl-interrupted.yaml", &sc);
  const RlRun b = simulate_rl(*sc.rl);
  CHECK(cli::rl_summary_json(a, *sc.rl).dump() == cli::rl_summary_json(b, *sc.rl).dump());
  CHECK(cli::chrome_trace_text(cli::rl_trace, a) == cli::chrome_trace_text(cli::rl_trace, b));
}

TEST_CASE("figures 10-37/38: the switch order decides the shared card's peak", "[rl]") {
  cli::Scenario sc;
  const RlRun run = run_shipped("rl-shared-card.yaml", &sc);
  REQUIRE(run.colocate.size() == 2);
  const auto& spec = *sc.rl->colocate;
  CHECK(spec.capacity / kGiB == Approx(74.5).margin(0.01));  // 80 GB = 74.5 GiB
  const auto& release_first = run.colocate[0];
  const auto& allocate_first = run.colocate[1];
  for (const auto& o : run.colocate) {
    CHECK(o.before / kGiB == Approx(44.0));               // training alone: 40 + 4
    CHECK(o.after / kGiB == Approx(43.3).margin(0.001));  // generation alone: 15.3 + 24 + 4
  }
  CHECK(allocate_first.peak - release_first.peak == find_state(spec, "kv_pool")->size);  // one KV pool: 24 GiB
  CHECK(release_first.peak == switch_peak(spec, spec.orders[0]));
  CHECK(allocate_first.peak == switch_peak(spec, spec.orders[1]));
  CHECK(release_first.peak / kGiB == Approx(59.3).margin(0.001));
  CHECK(allocate_first.peak / kGiB == Approx(83.3).margin(0.001));
  CHECK(release_first.fits);
  CHECK_FALSE(allocate_first.fits);
}

TEST_CASE("EP16 weight distribution: 6,768 GiB full set vs 423 GiB by shard", "[rl]") {
  cli::Scenario sc;
  const RlRun run = run_shipped("rl-weight-distribution.yaml", &sc);
  const auto& spec = *sc.rl->weight_transfer;
  REQUIRE(run.weight_transfer.size() == 2);
  const auto& full = run.weight_transfer[0];
  const auto& shard = run.weight_transfer[1];
  CHECK(full.total / kGiB == Approx(6768.0));
  CHECK(shard.total / kGiB == Approx(423.0));
  CHECK(full.total == total_traffic(spec, WeightDistribution::FullSet));
  CHECK(shard.total == total_traffic(spec, WeightDistribution::ByShard));
  for (int r = 0; r < spec.receivers; ++r) {
    CHECK(shard.received[r] / kGiB == Approx(26.4).margin(0.05));  // 423 / 16 = 26.44
    CHECK(full.received[r] == spec.size);
  }
  // One sender link carries everything, one transfer after the other (each rounded up to a ns).
  CHECK(full.time == spec.receivers * transfer_time(spec.size, spec.bandwidth));
  CHECK(to_s(full.time) == Approx(to_s(transfer_time(full.total, spec.bandwidth))));
  CHECK(to_s(shard.time) == Approx(to_s(transfer_time(shard.total, spec.bandwidth))));
}

TEST_CASE("learner workers share a batch; more senders split the distribution", "[rl]") {
  RlLoopSpec s;
  s.batches = 4;
  s.batch_size = 60;
  s.generation = {1, std::nullopt, DurationDist{DurationDist::Kind::Fixed, 40 * kSecond, 0}, std::nullopt, 0};
  s.learning = {2, std::nullopt, DurationDist{DurationDist::Kind::Fixed, 16 * kSecond, 0}, std::nullopt, 0};
  s.sync = 4 * kSecond;
  CHECK(simulate_rl_loop(s).stats.period == 52 * kSecond);  // 40 + 16/2 + 4
  WeightTransferSpec w{423LL << 30, 16, 16, 50'000'000'000, 0};
  const auto runs = simulate_weight_transfer(w);
  CHECK(runs[1].time == transfer_time(w.size / 16, w.bandwidth));  // each sender sends its own shard
  CHECK(runs[0].total == w.size * 16);
}

TEST_CASE("bad rl input: file, line and key", "[rl]") {
  const std::string base = "rl:\n  batches: 2\n  batch_size: 4\n";
  CHECK_THAT(expect_input_error(base + "  generation: {rate: 12}\n  learning: {rate: 8/s}\n"),
             Catch::Contains("t.yaml:4: rl.generation.rate: '12' is not a rate"));
  CHECK_THAT(expect_input_error(base + "  mode: asynchronus\n  generation: {rate: 12/s}\n  learning: {rate: 8/s}\n"),
             Catch::Contains("did you mean 'asynchronous'"));
  CHECK_THAT(expect_input_error(
                 base + "  weight_updates: in_flight\n  generation: {rate: 12/s}\n  learning: {batch_time: 1s}\n"),
             Catch::Contains("t.yaml:5: rl.generation.chunk: in-flight weight updates"));
  CHECK_THAT(expect_input_error(base + "  generation: {rate: 12/s, batch_time: 3s}\n  learning: {rate: 8/s}\n"),
             Catch::Contains("t.yaml:4: rl.generation: give exactly one of"));
  CHECK_THAT(
      expect_input_error(
          base + "  generation: {rate: 12/s}\n  learning: {rate: 8/s}\n  variants:\n    - {name: x, kep: 50%}\n"),
      Catch::Contains("t.yaml:7: rl.variants[0].kep: unknown key; did you mean 'kept'?"));
  CHECK_THAT(
      expect_input_error(
          base + "  generation: {rate: 12/s}\n  learning: {rate: 8/s}\n  variants:\n    - {name: x, kept: 150%}\n"),
      Catch::Contains("rl.variants[0].kept: must be a fraction"));
  CHECK_THAT(expect_input_error("rl:\n  colocate:\n    capacity: 80GB\n    bandwidth: 25GB/s\n    states: {a: 1GiB}\n"
                                "    orders: {x: [+a, -b]}\n"),
             Catch::Contains("t.yaml:6: rl.colocate.orders.x: unknown state 'b'"));
  CHECK_THAT(expect_input_error("rl: {}\n"), Catch::Contains("nothing to simulate"));
}
