// Data-parallel steps on random specs (DDP buckets and ZeRO-3, micro-batches, prefetch depth,
// kept gathers, backward orders, explicit collective times, NICs shared or per card, RTX 4090 /
// A100 / H100 links): folding the identical ranks into one must give exactly the step that
// simulating every card gives, and each figure must be what its definition says.
#include <catch2/catch.hpp>

#include <random>

#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"
#include "schedules/lowering/spec_error.hpp"

using namespace stepsim;

namespace {

constexpr Bytes MiB = 1024 * 1024;

DataParallelSpec random_spec(std::mt19937_64& rng) {
  const auto draw = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
  };
  DataParallelSpec s;
  const char* cards[] = {"rtx4090", "a100", "h100"};
  s.accelerator = *find_accelerator(cards[rng() % 3]);
  const int units = static_cast<int>(draw(2, 8));
  for (int k = 0; k < units; ++k) {
    DataParallelUnit u;
    u.name = "unit " + std::to_string(k);
    u.forward = draw(0, 5000) * kMicrosecond;
    u.backward_input = draw(0, 5000) * kMicrosecond;
    u.backward_split = rng() % 3 != 0;
    u.backward_weight = u.backward_split ? draw(0, 5000) * kMicrosecond : 0;
    u.weights = draw(0, 200) * MiB;
    u.gradients = draw(0, 200) * MiB;
    if (rng() % 6 == 0) u.gather = draw(0, 5000) * kMicrosecond;
    if (rng() % 6 == 0) u.reduce = draw(0, 5000) * kMicrosecond;
    s.units.push_back(u);
  }
  s.host.cards = static_cast<int>(draw(1, 8));
  s.host.nics = static_cast<int>(draw(1, s.host.cards));
  s.host.nic_bandwidth = draw(5, 50) * 1'000'000'000LL;
  s.host.cards_share_nic = rng() % 3 == 0;
  s.cards = s.host.cards * static_cast<int>(draw(1, 6));
  s.link_bandwidth = rng() % 2 == 0 ? 0 : draw(5, 50) * 1'000'000'000LL;
  s.alpha = draw(0, 50) * kMicrosecond;
  s.zero_stage = rng() % 2 == 0 ? 0 : 3;
  s.microbatches = static_cast<int>(draw(1, 4));
  s.prefetch = static_cast<int>(draw(0, 4));
  s.keep_gathered = rng() % 2 == 0;
  s.bucket_size = draw(1, 100) * MiB;
  const BackwardOrder orders[] = {BackwardOrder::Fused, BackwardOrder::InputFirst, BackwardOrder::WeightFirst};
  s.backward_order = orders[rng() % 3];
  s.input_wait = draw(0, 5) * kMillisecond;
  return s;
}

}  // namespace

TEST_CASE("data-parallel steps on random specs: folded ranks give the step of every card simulated",
          "[data_parallel][properties]") {
  std::mt19937_64 rng(4090);
  int ran = 0, refused = 0;
  for (int trial = 0; ran < 200 && trial < 2000; ++trial) {
    DataParallelSpec s = random_spec(rng);
    INFO("trial " << trial << ": " << s.accelerator.name << ", " << s.cards << " cards (" << s.host.cards
                  << " a host, " << s.host.nics << " NICs" << (s.host.cards_share_nic ? ", shared" : "")
                  << "), zero " << s.zero_stage << ", " << s.units.size() << " units, " << s.microbatches
                  << " micro-batches, prefetch " << s.prefetch << ", order "
                  << backward_order_name(s.backward_order));
    DataParallelRun folded;
    try {
      folded = run_data_parallel(s);
    } catch (const SpecError& e) {  // e.g. a backward order for a unit with no split backward: by name
      CHECK(e.key().rfind("data_parallel.", 0) == 0);
      ++refused;
      continue;
    }
    ++ran;
    s.fold = false;
    const DataParallelRun all = run_data_parallel(s);
    const DataParallelResult& f = folded.result;
    const DataParallelResult& a = all.result;
    CHECK(f.simulated_ranks == 1);
    CHECK(a.simulated_ranks == s.cards);
    CHECK(a.step_time == f.step_time);
    CHECK(a.compute_time == f.compute_time);
    CHECK(a.link_time == f.link_time);
    CHECK(a.exposed_comm == f.exposed_comm);
    CHECK(a.bytes_per_card == f.bytes_per_card);
    CHECK(a.collectives_per_card == f.collectives_per_card);
    for (const DataParallelRankStats& rank : a.ranks) {
      CHECK(rank.end == f.ranks[0].end);
      CHECK(rank.compute_busy == f.ranks[0].compute_busy);
      CHECK(rank.link_busy == f.ranks[0].link_busy);
    }
    // The definitions: exposed = step - input wait - compute, and a card's compute is the sum of
    // its units' passes over the micro-batches.
    CHECK(f.exposed_comm == f.step_time - f.input_wait - f.compute_time);
    CHECK(f.exposed_comm >= 0);
    Time compute = 0;
    for (const auto& u : folded.plan.units) compute += u.forward + u.backward_input + u.backward_weight;
    CHECK(f.compute_time == compute * s.microbatches);
  }
  CHECK(ran == 200);
  CHECK(refused > 0);  // the draws do reach specs that cannot run
}
