// Mixture-of-experts layers on random specs (1 to 128 experts on 1 to 16 cards, contiguous and
// round-robin placement, balanced, hot and explicit routing, dropless or with a capacity factor,
// instant or finite links, one spec in eight at extreme sizes): the layer follows the graph rules
// of schedules/lowering/moe/moe_layer.hpp. Each figure is checked against another way of getting it:
//  * rows: the routing's tally against tokens x top_k, kept and computed rows against a capacity
//    worked out in whole quarters, each card's rows against its experts dealt by the placement rule;
//  * traffic: each card's rows sent and received against dealing every expert's kept rows over the
//    cards one at a time (row j from card j mod cards), its own card's share never on the wire;
//  * time: every op's start and duration in the timeline against the barriers (dispatch = slowest
//    card's wire time in 128-bit arithmetic, expert compute = busiest card's rows x row_time,
//    combine = dispatch), the stats against those, refusals at a century against the same figures;
//  * relations: a second run against the first, a doubled row time against the first run, the
//    other placement given the same experts in the same card slots against the first placement.
// Inputs drawn wrong on purpose must be refused at their own key.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

#include "schedules/lowering/moe/moe_layer.hpp"
#include "schedules/lowering/spec_error.hpp"

using namespace stepsim;

namespace {

constexpr __int128 kCentury = static_cast<__int128>(100) * 365 * 86'400 * kSecond;

template <class T>
T pick(std::mt19937_64& rng, std::initializer_list<T> xs) {
  return *(xs.begin() + static_cast<std::ptrdiff_t>(rng() % xs.size()));
}

std::int64_t below(std::mt19937_64& rng, std::int64_t n) { return static_cast<std::int64_t>(rng() % n); }

struct Draw {
  MoeLayerSpec spec;
  std::string fault;  // the key a deliberately wrong input must be refused at ("": none drawn)
};

// `total` rows over `n` experts at random, none above `cap` (total <= n x cap), in shuffled order.
std::vector<std::int64_t> random_loads(std::mt19937_64& rng, int n, std::int64_t total, std::int64_t cap) {
  std::vector<std::int64_t> out;
  std::int64_t left = total;
  for (int e = 0; e < n; ++e) {
    const std::int64_t lo = std::max<std::int64_t>(0, left - static_cast<std::int64_t>(n - 1 - e) * cap);
    const std::int64_t hi = std::min(cap, left);
    out.push_back(lo + below(rng, hi - lo + 1));
    left -= out.back();
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

MoeRoutingSpec random_routing(std::mt19937_64& rng, const MoeLayerShape& shape) {
  MoeRoutingSpec r;
  const int kind = static_cast<int>(rng() % 3);
  if (kind == 1) {
    r.kind = MoeRoutingSpec::Kind::Hot;
    r.hot_fraction = pick(rng, {0.125, 0.25, 1.0 / 3, 0.5, 1.0});
    r.hot_load = pick(rng, {1.0, 1.25, 1.5, 2.0, 4.0});
  } else if (kind == 2) {
    r.kind = MoeRoutingSpec::Kind::Explicit;
    r.loads = random_loads(rng, shape.experts, shape.tokens * shape.top_k, shape.tokens);
  }
  return r;
}

int random_divisor(std::mt19937_64& rng, int n, int at_most) {
  std::vector<int> ds;
  for (int d = 1; d <= std::min(n, at_most); ++d)
    if (n % d == 0) ds.push_back(d);
  return ds[rng() % ds.size()];
}

// One wrong input, and the key that names it.
void inject_fault(std::mt19937_64& rng, Draw& d) {
  MoeLayerSpec& s = d.spec;
  const int E = s.shape.experts;
  switch (rng() % 10) {
    case 0:
      do s.cards = 2 + static_cast<int>(below(rng, E));  // E + 1 never divides E
      while (E % s.cards == 0);
      d.fault = "cards";
      return;
    case 1: s.cards = 0, d.fault = "cards"; return;
    case 2: s.shape.top_k = E + 1 + static_cast<int>(below(rng, 3)), d.fault = "top_k"; return;
    case 3: s.shape.tokens = -below(rng, 2), d.fault = "tokens"; return;
    case 4: s.row_time = -below(rng, 2), d.fault = "row_time"; return;
    case 5: (rng() % 2 ? s.row_bytes : s.link_bandwidth) = -1, d.fault = s.row_bytes < 0 ? "row_bytes" : "link"; return;
    case 6:
      s.routing.kind = MoeRoutingSpec::Kind::Explicit;
      s.routing.loads = random_loads(rng, E, s.shape.tokens * s.shape.top_k, s.shape.tokens);
      if (rng() % 2)
        s.routing.loads.pop_back();
      else
        s.routing.loads[below(rng, E)] += 1;  // one row more than the layer dispatches
      d.fault = "routing.loads";
      return;
    case 7:
      s.routing.kind = MoeRoutingSpec::Kind::Hot;
      s.routing.hot_fraction = rng() % 2 ? pick(rng, {0.0, -0.5, 1.5}) : 0.5;
      s.routing.hot_load = s.routing.hot_fraction == 0.5 ? pick(rng, {0.5, 0.0, -1.0}) : 1.0;
      d.fault = s.routing.hot_fraction == 0.5 ? "routing.hot_load" : "routing.hot_experts";
      return;
    case 8: s.shape.capacity_factor = pick(rng, {0.0, -1.0, E + 0.25}), d.fault = "capacity_factor"; return;
    default: s.shape.experts = 0, d.fault = "experts"; return;
  }
}

// A random spec: small sizes mostly, one in eight at sizes where rows x row_bytes passes 2^63 and
// some phases pass a century.
Draw random_draw(std::mt19937_64& rng) {
  Draw d;
  MoeLayerSpec& s = d.spec;
  const bool huge = rng() % 8 == 0;
  const int E = pick(rng, {1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128});
  s.shape.experts = E;
  s.shape.top_k = 1 + static_cast<int>(below(rng, std::min(E, 8)));
  s.shape.tokens = huge ? pick<std::int64_t>(rng, {1'000'000'000, 1'000'000'000'000}) : 1 + below(rng, 3000);
  s.cards = random_divisor(rng, E, 16);
  s.placement = rng() % 2 ? ExpertPlacement::Contiguous : ExpertPlacement::RoundRobin;
  s.routing = random_routing(rng, s.shape);
  if (rng() % 2) s.shape.capacity_factor = pick(rng, {0.5, 1.0, 1.25, 1.5, 2.0, 3.0});
  if (s.shape.capacity_factor && *s.shape.capacity_factor > E) d.fault = "capacity_factor";  // room past all rows
  s.row_time = huge ? pick<Time>(rng, {1, 3, 100'000'000}) : 1 + below(rng, 500);
  s.row_bytes = huge ? pick<Bytes>(rng, {1LL << 40, 1LL << 55, 1LL << 62}) : pick<Bytes>(rng, {0, 2, 8192, 12'345});
  s.link_bandwidth = huge ? pick<std::int64_t>(rng, {1'000'000'000, 1LL << 50, 1LL << 62})
                          : pick<std::int64_t>(rng, {0, 1'000'000'007, 50'000'000'000});
  if (d.fault.empty() && rng() % 5 == 0) inject_fault(rng, d);
  return d;
}

// What the graph rules give, worked out without the layer's code.
struct Expected {
  std::vector<int> home;                           // per expert
  std::vector<std::vector<int>> slots;             // per card: its experts in id order
  std::vector<std::int64_t> rows, sent, received;  // per card
  std::vector<__int128> compute, wire;             // per card, ns; 128-bit, as they may pass a century
  __int128 max_compute = 0, max_wire = 0;
};

// Experts dealt to cards: contiguous fills card 0 with E / cards of them, then card 1, ...;
// round-robin deals them one at a time in turn.
void deal_experts(const MoeLayerSpec& s, Expected& x) {
  const int E = s.shape.experts, n = s.cards, per = E / n;
  x.slots.assign(n, {});
  int card = 0;
  for (int e = 0; e < E; ++e) {
    if (s.placement == ExpertPlacement::RoundRobin)
      card = e == 0 || card + 1 == n ? 0 : card + 1;
    else if (static_cast<int>(x.slots[card].size()) == per)
      ++card;
    x.home.push_back(card);
    x.slots[card].push_back(e);
  }
}

// ceil(bytes x 1 s / bandwidth) without overflow: the whole seconds, then the rest.
__int128 wire_time(__int128 bytes, std::int64_t bandwidth) {
  if (bandwidth <= 0 || bytes <= 0) return 0;
  const __int128 whole = bytes / bandwidth, rest = bytes % bandwidth;
  if (whole > kCentury / kSecond + 1) return kCentury + 1;
  return whole * kSecond + (rest * kSecond + bandwidth - 1) / bandwidth;
}

Expected expect(const MoeLayerSpec& s, const ExpertLoads& l) {
  Expected x;
  deal_experts(s, x);
  const int n = s.cards;
  x.rows.assign(n, 0), x.sent.assign(n, 0), x.received.assign(n, 0);
  for (int e = 0; e < s.shape.experts; ++e) {
    x.rows[x.home[e]] += l.computed[e];
    for (int from = 0; from < n; ++from) {
      // Kept row j comes from card j mod n: the count of such j below kept.
      const std::int64_t k = l.kept[e], rows = k > from ? (k - 1 - from) / n + 1 : 0;
      if (from == x.home[e]) continue;  // already on its expert's card
      x.sent[from] += rows;
      x.received[x.home[e]] += rows;
    }
  }
  for (int c = 0; c < n; ++c) {
    x.compute.push_back(static_cast<__int128>(x.rows[c]) * s.row_time);
    x.wire.push_back(
        wire_time(static_cast<__int128>(std::max(x.sent[c], x.received[c])) * s.row_bytes, s.link_bandwidth));
    x.max_compute = std::max(x.max_compute, x.compute.back());
    x.max_wire = std::max(x.max_wire, x.wire.back());
  }
  return x;
}

// A refusal names the key of the wrong input drawn; with none drawn, only hot routing past the
// tokens or a phase past a century may be refused.
void check_refusal(const Draw& d, const std::string& key) {
  INFO("refused at " << key << ", drawn fault '" << d.fault << "'");
  const MoeLayerSpec& s = d.spec;
  const bool hot = s.routing.kind == MoeRoutingSpec::Kind::Hot;
  const bool routing_key = key == "routing" || key == "routing.hot_load";
  if (!d.fault.empty()) {
    // Capacity is checked after routing, so a hot routing that cannot be may be named first.
    CHECK((key == d.fault || (hot && d.fault == "capacity_factor" && routing_key)));
    return;
  }
  if (routing_key) {
    CHECK(s.routing.kind == MoeRoutingSpec::Kind::Hot);
    return;
  }
  REQUIRE((key == "row_time" || key == "row_bytes"));
  const Expected x = expect(s, route_experts(s.shape, s.routing));
  const bool compute_over = x.max_compute > kCentury, wire_over = x.max_wire > kCentury;
  if (key == "row_time") CHECK(compute_over);
  if (key == "row_bytes") CHECK((!compute_over && wire_over));  // compute is checked first
}

// Routed, kept and computed rows against tokens x top_k and a capacity in whole quarters.
// Rows within [from, to) spread evenly: no two differ by more than one.
bool even(const std::vector<std::int64_t>& rows, std::size_t from, std::size_t to) {
  if (from >= to) return true;
  const auto [lo, hi] = std::minmax_element(rows.begin() + from, rows.begin() + to);
  return *hi - *lo <= 1;
}

void check_routed(const MoeLayerSpec& s, const ExpertLoads& l) {
  const std::int64_t D = s.shape.tokens * s.shape.top_k;
  CHECK(l.dispatches == D);
  CHECK(std::accumulate(l.routed.begin(), l.routed.end(), std::int64_t{0}) == D);
  for (const std::int64_t r : l.routed) CHECK(r <= s.shape.tokens);  // a token picks an expert once
  const std::size_t E = l.routed.size();
  if (s.routing.kind == MoeRoutingSpec::Kind::Explicit) CHECK(l.routed == s.routing.loads);
  if (s.routing.kind == MoeRoutingSpec::Kind::Balanced) CHECK(even(l.routed, 0, E));
  if (s.routing.kind == MoeRoutingSpec::Kind::Hot) {  // the first round(E f) (at least one) even, the rest even
    const auto hot = std::max<std::size_t>(1, static_cast<std::size_t>(std::lround(E * s.routing.hot_fraction)));
    CHECK(even(l.routed, 0, hot));
    CHECK(even(l.routed, hot, E));
  }
}

void check_rows(const MoeLayerSpec& s, const ExpertLoads& l) {
  check_routed(s, l);
  const std::int64_t D = s.shape.tokens * s.shape.top_k;
  std::int64_t kept = 0, computed = 0, dropped = 0, padded = 0;
  const int E = s.shape.experts;
  for (int e = 0; e < E; ++e) {
    if (s.shape.capacity_factor) {
      const auto quarters = static_cast<__int128>(*s.shape.capacity_factor * 4);  // drawn in quarters
      const auto cap = static_cast<std::int64_t>((quarters * D + 4 * E - 1) / (4 * E));
      CHECK(l.kept[e] == std::min(l.routed[e], cap));
      CHECK(l.computed[e] == cap);
    } else {
      CHECK(l.kept[e] == l.routed[e]);
      CHECK(l.computed[e] == l.routed[e]);
    }
    kept += l.kept[e], computed += l.computed[e];
    dropped += l.routed[e] - l.kept[e], padded += l.computed[e] - l.kept[e];
  }
  CHECK(l.dropped == dropped);
  CHECK(l.padded == padded);
  CHECK(kept + l.dropped == D);
  CHECK(computed == kept + l.padded);
  if (!s.shape.capacity_factor) CHECK((l.dropped == 0 && l.padded == 0));
}

int card_of(const MoeLayerProgram& p, ResourceId r) {
  const auto it = std::find(p.compute.begin(), p.compute.end(), r);
  return it == p.compute.end() ? -1 : static_cast<int>(it - p.compute.begin());
}

// Every expert op on its card, in id order there, of computed rows x row_time.
void check_expert_ops(const MoeLayerRun& run, const Expected& x) {
  const MoeLayerProgram& p = *run.program;
  int ops = 0;
  for (OpId op = 0; op < p.graph.op_count(); ++op) {
    const int e = p.op_expert[op];
    if (e < 0) continue;
    ++ops;
    CHECK(card_of(p, p.graph.op_resource(op)) == x.home[e]);
    CHECK(p.graph.op_duration(op) == run.loads.computed[e] * run.spec.row_time);
  }
  CHECK(ops == run.spec.shape.experts);
  for (int c = 0; c < run.spec.cards; ++c) {
    std::vector<int> order;
    for (const OpId op : p.expert_ops[c]) order.push_back(p.op_expert[op]);
    CHECK(order == x.slots[c]);
  }
}

// Op starts and ends against the barriers: dispatch, back-to-back experts, combine.
void check_timeline(const MoeLayerRun& run, const Expected& x) {
  const MoeLayerProgram& p = *run.program;
  const Timeline& tl = run.timeline;
  const auto D = static_cast<Time>(x.max_wire), C = static_cast<Time>(x.max_compute);
  CHECK(tl.start[p.dispatched] == D);
  CHECK(tl.start[p.combine_ready] == D + C);
  Time last = 0;
  for (int c = 0; c < run.spec.cards; ++c) {
    const auto wire = static_cast<Time>(x.wire[c]);
    CHECK(tl.start[p.dispatch[c]] == 0);
    CHECK(p.graph.op_duration(p.dispatch[c]) == wire);
    CHECK(tl.start[p.expert_ops[c].front()] == D);
    CHECK(tl.end(p.graph, p.expert_ops[c].back()) == D + static_cast<Time>(x.compute[c]));
    CHECK(tl.start[p.combine[c]] == D + C);
    CHECK(p.graph.op_duration(p.combine[c]) == wire);
    last = std::max(last, tl.done(p.graph, p.combine[c]));
  }
  CHECK(tl.makespan == last);
  CHECK(tl.makespan == 2 * D + C);
}

// The stats against the expected figures: phases, per-card rows, busy time, waiting and traffic.
void check_stats(const MoeLayerRun& run, const Expected& x) {
  const MoeLayerStats& st = run.stats;
  const int n = run.spec.cards;
  CHECK(st.dispatch == static_cast<Time>(x.max_wire));
  CHECK(st.combine == static_cast<Time>(x.max_wire));
  CHECK(st.expert_compute == static_cast<Time>(x.max_compute));
  CHECK(st.layer == st.dispatch + st.expert_compute + st.combine);
  if (run.spec.link_bandwidth == 0 || run.spec.row_bytes == 0) CHECK(st.layer == st.expert_compute);
  std::int64_t total = 0, sent = 0, received = 0;
  int busiest = 0;
  REQUIRE(st.cards.size() == static_cast<std::size_t>(n));
  for (int c = 0; c < n; ++c) {
    const MoeCardStats& cs = st.cards[c];
    CHECK(cs.rows == x.rows[c]);
    CHECK(cs.compute == static_cast<Time>(x.compute[c]));
    CHECK(cs.waiting == static_cast<Time>(x.max_compute - x.compute[c]));
    CHECK(cs.traffic.rows_sent == x.sent[c]);
    CHECK(cs.traffic.rows_received == x.received[c]);
    total += x.rows[c], sent += cs.traffic.rows_sent, received += cs.traffic.rows_received;
    if (x.rows[c] > x.rows[busiest]) busiest = c;
  }
  CHECK(sent == received);  // every row on the wire leaves one card and reaches another
  CHECK(st.busiest_card == busiest);
  CHECK(st.mean_card_rows == Approx(static_cast<double>(total) / n));
  if (total > 0) CHECK(st.imbalance == Approx(static_cast<double>(x.rows[busiest]) * n / static_cast<double>(total)));
}

// The same spec: the same timeline and stats.
void check_again(const MoeLayerRun& run) {
  const MoeLayerRun again = simulate_moe_layer(run.spec);
  CHECK(again.timeline.start == run.timeline.start);
  CHECK(again.stats.layer == run.stats.layer);
  CHECK(again.stats.busiest_card == run.stats.busiest_card);
}

// Twice the row time: expert compute doubles exactly, the all-to-alls do not move.
void check_doubled_row_time(const MoeLayerRun& run, const Expected& x) {
  MoeLayerSpec s = run.spec;
  s.row_time *= 2;
  if (2 * x.max_compute > kCentury) {
    try {
      simulate_moe_layer(s);
      FAIL("a card's compute past a century was not refused");
    } catch (const SpecError& e) { CHECK(std::string(e.key()) == "row_time"); }
    return;
  }
  const MoeLayerRun twice = simulate_moe_layer(s);
  CHECK(twice.stats.expert_compute == 2 * run.stats.expert_compute);
  CHECK(twice.stats.dispatch == run.stats.dispatch);
  CHECK(twice.stats.layer == run.stats.layer + run.stats.expert_compute);
  for (int c = 0; c < s.cards; ++c) CHECK(twice.stats.cards[c].compute == 2 * run.stats.cards[c].compute);
}

// The other placement, each card given the same experts' rows in the same slots (explicit
// routing): placement only says which card holds which expert, so every card's figures repeat.
void check_other_placement(const MoeLayerRun& run, const Expected& x) {
  MoeLayerSpec s = run.spec;
  s.placement = s.placement == ExpertPlacement::Contiguous ? ExpertPlacement::RoundRobin : ExpertPlacement::Contiguous;
  Expected other;
  deal_experts(s, other);
  s.routing = {};
  s.routing.kind = MoeRoutingSpec::Kind::Explicit;
  s.routing.loads.assign(s.shape.experts, 0);
  for (int c = 0; c < s.cards; ++c)
    for (std::size_t j = 0; j < x.slots[c].size(); ++j)
      s.routing.loads[other.slots[c][j]] = run.loads.routed[x.slots[c][j]];
  const MoeLayerRun moved = simulate_moe_layer(s);
  CHECK(moved.stats.layer == run.stats.layer);
  CHECK(moved.stats.dispatch == run.stats.dispatch);
  CHECK(moved.stats.expert_compute == run.stats.expert_compute);
  CHECK(moved.stats.busiest_card == run.stats.busiest_card);
  for (int c = 0; c < s.cards; ++c) {
    CHECK(moved.stats.cards[c].rows == run.stats.cards[c].rows);
    CHECK(moved.stats.cards[c].waiting == run.stats.cards[c].waiting);
    CHECK(moved.stats.cards[c].traffic.rows_sent == run.stats.cards[c].traffic.rows_sent);
    CHECK(moved.stats.cards[c].traffic.rows_received == run.stats.cards[c].traffic.rows_received);
  }
}

std::string describe(const MoeLayerSpec& s) {
  const char* kinds[] = {"balanced", "hot", "explicit"};
  return "E " + std::to_string(s.shape.experts) + " top " + std::to_string(s.shape.top_k) + " tokens " +
         std::to_string(s.shape.tokens) + " cards " + std::to_string(s.cards) + " " +
         std::string(placement_name(s.placement)) + " " + kinds[static_cast<int>(s.routing.kind)] + " capacity " +
         (s.shape.capacity_factor ? std::to_string(*s.shape.capacity_factor) : "none") + " row " +
         std::to_string(s.row_time) + " ns " + std::to_string(s.row_bytes) + " B link " +
         std::to_string(s.link_bandwidth);
}

}  // namespace

TEST_CASE("MoE layers on random specs: rows, traffic and phases follow the graph rules", "[moe][properties]") {
  std::mt19937_64 rng(1027);
  int ran = 0, refused = 0, huge = 0, dropping = 0;
  for (int trial = 0; ran < 1000 && trial < 10000; ++trial) {
    const Draw d = random_draw(rng);
    INFO("trial " << trial << ": " << describe(d.spec));
    MoeLayerRun run;
    try {
      run = simulate_moe_layer(d.spec);
    } catch (const SpecError& e) {
      check_refusal(d, e.key());
      ++refused;
      continue;
    }
    CHECK(d.fault.empty());
    ++ran;
    huge += d.spec.shape.tokens >= 1'000'000'000;
    dropping += run.loads.dropped > 0;
    const Expected x = expect(d.spec, run.loads);
    const bool within = x.max_compute <= kCentury && x.max_wire <= kCentury;
    REQUIRE(within);  // else it should have been refused
    check_rows(d.spec, run.loads);
    check_expert_ops(run, x);
    check_timeline(run, x);
    check_stats(run, x);
    check_again(run);
    check_doubled_row_time(run, x);
    check_other_placement(run, x);
  }
  CHECK(ran == 1000);
  CHECK(refused > 100);   // wrong inputs are drawn one spec in five
  CHECK(huge > 40);       // the draws do reach rows x row_bytes past 2^63
  CHECK(dropping > 100);  // and capacity factors that drop rows
}

// Regression: rows x row_bytes past 2^63 (rows x row_bytes x 1 s past 2^127) once wrapped, giving a
// wrong all-to-all time or letting one of more than a century through.
TEST_CASE("MoE all-to-all of more than 2^63 bytes: timed in 128-bit, refused past a century", "[moe][properties]") {
  MoeLayerSpec s;
  s.shape = {2, 1, 1'000'000'000'000, std::nullopt};  // two experts of 5e11 rows, half of each from the other card
  s.cards = 2;
  s.row_time = 1;
  s.row_bytes = 1LL << 40;
  s.link_bandwidth = 1LL << 62;
  const MoeLayerRun run = simulate_moe_layer(s);
  REQUIRE(run.stats.cards[0].traffic.rows_received == 250'000'000'000);
  // 2.5e11 rows x 2^40 B at 2^62 B/s: 2.5e11 / 2^22 s, rounded up to the nanosecond.
  const __int128 ns = (static_cast<__int128>(250'000'000'000) * kSecond + (1 << 22) - 1) >> 22;
  CHECK(run.stats.dispatch == static_cast<Time>(ns));
  s.row_bytes = 1LL << 60;  // 2.5e11 rows x 2^60 B at 2^50 B/s: 2.5e11 x 2^10 s, some 8 million years
  s.link_bandwidth = 1LL << 50;
  try {
    simulate_moe_layer(s);
    FAIL("an all-to-all of more than a century was not refused");
  } catch (const SpecError& e) { CHECK(std::string(e.key()) == "row_bytes"); }
}
