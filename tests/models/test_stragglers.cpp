// Stragglers against the book's E[max of N normals] (reference section 5, exercise 10-9).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "models/stragglers_sim.hpp"

using namespace stepsim;

TEST_CASE("E[max of N normals] by numerical integration: 1.42 / 2.23 / 3.25 sigma", "[stragglers]") {
  CHECK(std::round(expected_max_standard_normal(8) * 100) / 100 == Approx(1.42));
  CHECK(std::round(expected_max_standard_normal(48) * 100) / 100 == Approx(2.23));
  CHECK(std::round(expected_max_standard_normal(1024) * 100) / 100 == Approx(3.25));
  CHECK(expected_max_standard_normal(2) == Approx(1 / std::sqrt(M_PI)).epsilon(1e-9));  // closed form
}

TEST_CASE("simulated slowest card matches the integral for 8, 48 and 1,024 cards", "[stragglers]") {
  // mu = 52.2 s (48 cards' compute), sigma 5% of it (exercise 10-9), comm + input 0.58 s.
  for (const std::int64_t n : {8, 48, 1024}) {
    StragglerSpec s;
    s.cards = n;
    s.compute = 52'200 * kMillisecond;
    s.sigma = 2'610 * kMillisecond;
    s.other = 580 * kMillisecond;
    s.steps = n == 1024 ? 2000 : 4000;
    const StragglerResult r = simulate_stragglers(s, 5);
    const double k = expected_max_standard_normal(static_cast<int>(n));
    INFO(n << " cards: simulated mu + " << r.max_excess_sigmas.mean << " sigma +- " << r.max_excess_sigmas.se
           << ", integral " << k);
    CHECK(std::abs(r.max_excess_sigmas.mean - k) < 4 * r.max_excess_sigmas.se);
    CHECK(std::abs(r.step_seconds.mean - (52.2 + 0.58 + k * 2.61)) < 4 * r.step_seconds.se);
  }
}

TEST_CASE("a persistently slow machine shows up as the cards that wait least at the collective", "[stragglers]") {
  StragglerSpec s;
  s.cards = 48;
  s.compute = 52'200 * kMillisecond;
  s.sigma = 500 * kMillisecond;
  s.slow_machines = 1;
  s.slowdown = 1.05;
  s.steps = 500;
  const StragglerResult r = simulate_stragglers(s, 3);
  REQUIRE(r.slow_machine_count == 1);
  double slow_max = 0, normal_min = 1e18;
  int slow_cards = 0;
  for (std::size_t c = 0; c < r.card_wait_seconds.size(); ++c) {
    if (r.slow_card[c]) {
      slow_max = std::max(slow_max, r.card_wait_seconds[c]);
      ++slow_cards;
    } else {
      normal_min = std::min(normal_min, r.card_wait_seconds[c]);
    }
  }
  CHECK(slow_cards == 8);
  CHECK(slow_max < normal_min);
  // The others wait about the slowdown: 5% of 52.2 s ~ 2.6 s (plus the slow machine's jitter).
  CHECK(normal_min > 2.0);
  // Same result with one thread or two.
  const StragglerResult one = simulate_stragglers(s, 3, 1);
  CHECK(one.step_seconds.mean == r.step_seconds.mean);
  CHECK(one.card_wait_seconds == r.card_wait_seconds);
}
