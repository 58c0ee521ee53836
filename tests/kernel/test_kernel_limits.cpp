// The kernel at its limits: times near the int64 end (issue 17, R1: `now + duration` used to
// overflow and crash in the event queue), ops without successors at the end of the successor
// array (the empty-vector reference of issue 17), the level sweep's radix sort against a
// comparison sort, and the critical path of an executed timeline.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>

#include "sim/critical_path.hpp"
#include "sim/engine.hpp"
#include "sim/level.hpp"

using namespace stepsim;

namespace {
constexpr Time kMax = std::numeric_limits<Time>::max();
}

TEST_CASE("a step longer than the time limit is a TimeOverflowError naming the op", "[engine][limits]") {
  // R1's shape: a 60,000-day forward twice in a row on one device (2 x 5.18e18 ns > 2^63).
  OpGraph g;
  const auto d = g.add_resource("d0");
  const Time day = 86'400 * kSecond;
  const OpId f0 = g.add_op(d, 60'000 * day);
  const OpId f1 = g.add_op(d, 60'000 * day);
  g.add_dep(f0, f1);
  g.set_namer([](OpId op) {
    std::string name = "F";  // (not "F" + to_string: GCC 12 warns -Wrestrict on that, wrongly)
    name += std::to_string(op);
    return name;
  });
  try {
    run(g);
    FAIL("no error");
  } catch (const TimeOverflowError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("too large: F1 at 5184000000000000000 ns plus 5184000000000000000 ns", 0) == 0);
    CHECK(what.find("would exceed 292 years") != std::string::npos);
  }
}

TEST_CASE("a latency that passes the limit is a TimeOverflowError", "[engine][limits]") {
  // R1's `--set pipeline.link.latency=10000d`: the transfer itself fits, its arrival does not.
  OpGraph g;
  const auto c = g.add_resource("c");
  const auto link = g.add_resource("link", Discipline::Fifo, kMax / 2 + 10);
  const OpId a = g.add_op(c, kMax / 2);
  const OpId send = g.add_op(link, 1);
  const OpId b = g.add_op(c, 1);
  g.add_dep(a, send);
  g.add_dep(send, b);
  CHECK_THROWS_AS(run(g), TimeOverflowError);
}

TEST_CASE("times up to exactly the limit run", "[engine][limits]") {
  OpGraph g;
  const auto c = g.add_resource("c");
  const OpId a = g.add_op(c, kMax - 5);
  const OpId b = g.add_op(c, 5);
  const auto t = run(g);
  CHECK(t.start[b] == kMax - 5);
  CHECK(t.end(g, b) == kMax);
  CHECK(t.makespan == kMax);
  CHECK(t.start[a] == 0);
}

TEST_CASE("a transfer longer than the limit is a TimeOverflowError", "[engine][limits]") {
  // R1's `data_parallel.link_bandwidth=1B/s`: 10 GB at 1 B/s is 317 years.
  CHECK(transfer_time(Bytes{1} << 30, 1) == (Time{1} << 30) * kSecond);
  CHECK_THROWS_AS(transfer_time(10'000'000'000LL, 1), TimeOverflowError);
  CHECK(transfer_time(9'000'000'000LL, 1) == 9'000'000'000LL * kSecond);
  // Byte counts past int64 (an all-to-all's rows x row bytes): from 2^96 bytes, where bytes x 10^9
  // would pass 2^127, whole seconds are taken first. 2^96 B at 2^63 - 1 B/s is just over 2^33 s
  // (exact: Python's ceil(2**96 * 10**9 / (2**63 - 1))); at 2^62 B/s it is 2^34 s, past the limit.
  const __int128 big = static_cast<__int128>(1) << 96;
  CHECK(transfer_time(big, INT64_MAX) == 8'589'934'592'000'000'001LL);
  CHECK(transfer_time(big + 12345, INT64_MAX) == 8'589'934'592'000'000'001LL);
  CHECK(transfer_time(big - 1, INT64_MAX) == 8'589'934'592'000'000'001LL);  // the narrow path, same ceiling
  CHECK_THROWS_AS(transfer_time(big, INT64_C(1) << 62), TimeOverflowError);
  CHECK_THROWS_AS(transfer_time(static_cast<__int128>(1) << 120, 1), TimeOverflowError);
}

TEST_CASE("ops without successors, last in the graph, and a graph without edges", "[engine][limits]") {
  // Every op here has an empty successor list, including the last one: the successor array is
  // empty. (Used to bind a reference one past the end of an empty vector.)
  OpGraph g;
  const auto r = g.add_resource("r"), s = g.add_resource("s");
  g.add_op(r, 3);
  g.add_op(s, 4);
  g.add_op(r, 0);
  const auto t = run(g);
  CHECK(g.dep_count() == 0);
  CHECK(t.start == std::vector<Time>{0, 0, 3});
  CHECK(t.makespan == 4);

  OpGraph empty;
  CHECK(run(empty).makespan == 0);
}

TEST_CASE("level sweep: radix-sorted changes give the same curve as a sorted reference", "[levels][limits]") {
  // 3,000 holds on 3 counters with times up to 2^40 ns (several radix passes) and many ties.
  std::mt19937_64 rng(7);
  OpGraph g;
  const auto r = g.add_resource("r");
  std::vector<OpId> ops;
  for (int i = 0; i < 3000; ++i)
    ops.push_back(g.add_op(r, static_cast<Time>(rng() % 4 == 0 ? 0 : rng() % (Time{1} << 28))));
  const auto t = run(g);
  std::vector<Hold> holds;
  for (int i = 0; i < 3000; ++i) {
    const OpId a = ops[rng() % ops.size()], b = ops[rng() % ops.size()];
    const OpId from = std::min(a, b), until = std::max(a, b);
    holds.push_back({static_cast<std::uint32_t>(i % 3),
                     static_cast<std::int64_t>(rng() % 100) - 10,
                     {from, OpPoint::Start},
                     {until, OpPoint::End}});
  }
  const auto curves = sweep_levels(g, t, holds, 3);
  for (std::uint32_t c = 0; c < 3; ++c) {
    std::map<Time, std::int64_t> delta;
    for (const Hold& h : holds) {
      if (h.counter != c || h.amount == 0) continue;
      delta[time_of(g, t, h.from)] += h.amount;
      delta[time_of(g, t, h.until)] -= h.amount;
    }
    std::vector<std::pair<Time, std::int64_t>> steps{{0, 0}};
    std::int64_t level = 0, peak = 0;
    Time peak_time = 0;
    for (const auto& [time, d] : delta) {
      level += d;
      if (steps.back().first == time)
        steps.back().second = level;
      else if (steps.back().second != level)
        steps.emplace_back(time, level);
      if (level > peak) {
        peak = level;
        peak_time = time;
      }
    }
    CHECK(curves[c].steps == steps);
    CHECK(curves[c].peak == peak);
    CHECK(curves[c].peak_time == peak_time);
    CHECK(steps.size() > 100);
  }
}

TEST_CASE("critical path: dependencies, a busy resource and a busy link", "[engine][critical_path]") {
  // d0: a (10) then b (2). d1: c (5), waits for a's message over the link (3 + latency 1), then
  // d (4) waits for b's message, which queues behind a's on the FIFO link.
  OpGraph g;
  const auto d0 = g.add_resource("d0"), d1 = g.add_resource("d1");
  const auto link = g.add_resource("link", Discipline::Fifo, 1);
  const OpId a = g.add_op(d0, 10);
  const OpId b = g.add_op(d0, 2);
  const OpId sa = g.add_op(link, 3);
  const OpId sb = g.add_op(link, 3);
  const OpId c = g.add_op(d1, 5);
  const OpId d = g.add_op(d1, 4);
  g.add_dep(a, sa);
  g.add_dep(sa, c);
  g.add_dep(b, sb);
  g.add_dep(sb, d);
  const auto t = run(g);
  // a 0-10, b 10-12, sa 10-13 (done 14), sb 13-16 (queued behind sa; done 17), c 14-19, d 19-23.
  REQUIRE(t.makespan == 23);
  const auto chain = critical_path(g, t);
  // d waited on c (its resource: c ends at 19, sb done at 17); c on sa; sa on a; a from start.
  REQUIRE(chain.size() == 4);
  CHECK(chain[0].op == a);
  CHECK(chain[0].why == CriticalStep::Why::Start);
  CHECK(chain[1].op == sa);
  CHECK(chain[1].why == CriticalStep::Why::Dependency);
  CHECK(chain[2].op == c);
  CHECK(chain[2].why == CriticalStep::Why::Dependency);
  CHECK(chain[3].op == d);
  CHECK(chain[3].why == CriticalStep::Why::Resource);

  // Make c short: now d waits for sb, which waited for the link (sa), which waited for a.
  OpGraph h;
  const auto e0 = h.add_resource("d0"), e1 = h.add_resource("d1");
  const auto l = h.add_resource("link", Discipline::Fifo, 1);
  const OpId ha = h.add_op(e0, 10), hb = h.add_op(e0, 2);
  const OpId hsa = h.add_op(l, 3), hsb = h.add_op(l, 3);
  const OpId hc = h.add_op(e1, 1), hd = h.add_op(e1, 4);
  h.add_dep(ha, hsa);
  h.add_dep(hsa, hc);
  h.add_dep(hb, hsb);
  h.add_dep(hsb, hd);
  const auto ht = run(h);
  REQUIRE(ht.makespan == 21);  // sb done 17, d 17-21
  const auto hchain = critical_path(h, ht);
  REQUIRE(hchain.size() == 4);
  CHECK(hchain[0].op == ha);
  CHECK(hchain[1].op == hsa);
  CHECK(hchain[1].why == CriticalStep::Why::Dependency);
  CHECK(hchain[2].op == hsb);
  CHECK(hchain[2].why == CriticalStep::Why::Resource);  // queued behind sa on the link
  CHECK(hchain[3].op == hd);
  CHECK(hchain[3].why == CriticalStep::Why::Dependency);
  CHECK(ht.start[hsb] == 13);
  (void)hc;
}
