// The kernel on its own: program order, FIFO links, latency, ties, cycles and deadlocks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "sim/engine.hpp"
#include "sim/level.hpp"
#include "sim/level_runs.hpp"

using namespace stepsim;

TEST_CASE("program order waits even when a later op is ready", "[engine]") {
  OpGraph g;
  const auto a = g.add_resource("a"), b = g.add_resource("b");
  const OpId slow = g.add_op(a, 10);
  const OpId first = g.add_op(b, 5);   // waits for slow
  const OpId second = g.add_op(b, 1);  // ready at 0, but after `first` in program order
  g.add_dep(slow, first);
  const auto t = run(g);
  CHECK(t.start[first] == 10);
  CHECK(t.start[second] == 15);
  CHECK(t.makespan == 16);
}

TEST_CASE("FIFO resources serve by ready time, ties by op id; latency delays successors", "[engine]") {
  OpGraph g;
  const auto c = g.add_resource("compute");
  const auto link = g.add_resource("link", Discipline::Fifo, 100);
  const OpId p1 = g.add_op(c, 4);
  const OpId p2 = g.add_op(c, 2);
  const OpId late = g.add_op(link, 3);  // added first but ready last
  const OpId early = g.add_op(link, 3);
  g.add_dep(p1, early);
  g.add_dep(p2, late);
  const auto u = g.add_resource("user");
  const OpId use = g.add_op(u, 1);
  g.add_dep(late, use);
  const auto t = run(g);
  CHECK(t.start[early] == 4);
  CHECK(t.start[late] == 7);
  CHECK(t.start[use] == 7 + 3 + 100);

  OpGraph tie;
  const auto l = tie.add_resource("link", Discipline::Fifo);
  const OpId x = tie.add_op(l, 1), y = tie.add_op(l, 1);
  const auto tt = run(tie);
  CHECK(tt.start[x] == 0);
  CHECK(tt.start[y] == 1);
}

TEST_CASE("a dependency cycle is reported by op names", "[engine]") {
  OpGraph g;
  const auto r = g.add_resource("r");
  const OpId a = g.add_op(r, 1), b = g.add_op(r, 1), c = g.add_op(r, 1);
  g.add_dep(a, b);
  g.add_dep(b, c);
  g.add_dep(c, a);
  g.set_namer([](OpId op) { return std::string("op") + char('A' + op); });
  try {
    run(g);
    FAIL("expected a cycle");
  } catch (const GraphError& e) {
    const std::string what = e.what();
    CHECK(what.find("opA") != std::string::npos);
    CHECK(what.find("opB") != std::string::npos);
    CHECK(what.find("opC") != std::string::npos);
  }
}

TEST_CASE("a long dependency cycle names its first six ops and counts the rest", "[engine]") {
  // 10 ops, each on its own resource, op k waiting for op k - 1 and op 0 for op 9: the message
  // stays one short line however long the cycle.
  OpGraph g;
  std::vector<OpId> ops;
  for (int k = 0; k < 10; ++k) ops.push_back(g.add_op(g.add_resource(fmt::format("r{}", k)), 1));
  for (int k = 0; k < 10; ++k) g.add_dep(ops[static_cast<std::size_t>((k + 9) % 10)], ops[static_cast<std::size_t>(k)]);
  g.set_namer([](OpId op) { return fmt::format("op{}", op); });
  try {
    run(g);
    FAIL("expected a cycle");
  } catch (const GraphError& e) {
    const std::string what = e.what();
    CHECK(what.rfind("dependency cycle: op", 0) == 0);
    CHECK(what.find("... (10 ops in the cycle)") != std::string::npos);
    int named = 0;
    for (std::size_t at = what.find(" -> "); at != std::string::npos; at = what.find(" -> ", at + 4)) ++named;
    CHECK(named == 6);  // six ops, each followed by an arrow, then the count
  }
}

TEST_CASE("a program order that deadlocks names each stuck resource and op", "[engine]") {
  // Two streams each wait for the other's second op first.
  OpGraph g;
  const auto r0 = g.add_resource("dev0"), r1 = g.add_resource("dev1");
  const OpId a1 = g.add_op(r0, 1), a2 = g.add_op(r0, 1);
  const OpId b1 = g.add_op(r1, 1), b2 = g.add_op(r1, 1);
  g.add_dep(b2, a1);
  g.add_dep(a2, b1);
  g.set_namer([](OpId op) { return "op" + std::to_string(op); });
  try {
    run(g);
    FAIL("expected a deadlock");
  } catch (const DeadlockError& e) {
    REQUIRE(e.stuck().size() == 2);
    const std::string what = e.what();
    CHECK(what.find("dev0 stuck at op0 waiting on op3") != std::string::npos);
    CHECK(what.find("dev1 stuck at op2 waiting on op1") != std::string::npos);
  }
}

TEST_CASE("zero-duration chains run at one instant", "[engine]") {
  OpGraph g;
  const auto r = g.add_resource("r"), s = g.add_resource("s");
  const OpId a = g.add_op(r, 0), b = g.add_op(s, 0), c = g.add_op(r, 0);
  g.add_dep(a, b);
  g.add_dep(b, c);
  const auto t = run(g);
  CHECK(t.start[c] == 0);
  CHECK(t.makespan == 0);
}

TEST_CASE("levels: releases before acquisitions at equal times", "[engine][levels]") {
  // Figure-free version of the book's point: 8 GiB of activations and a 4 GiB gather buffer
  // live at once need 12; freeing the first before allocating the second needs 8.
  OpGraph g;
  const auto r = g.add_resource("r");
  const OpId act = g.add_op(r, 10), gather = g.add_op(r, 10);
  const auto t = run(g);
  const std::vector<Hold> apart = {{0, 8, {act, OpPoint::Start}, {act, OpPoint::End}},
                                   {0, 4, {gather, OpPoint::Start}, {gather, OpPoint::End}}};
  CHECK(sweep_levels(g, t, apart, 1)[0].peak == 8);
  const std::vector<Hold> together = {{0, 8, {act, OpPoint::Start}, {gather, OpPoint::End}},
                                      {0, 4, {gather, OpPoint::Start}, {gather, OpPoint::End}}};
  const auto curve = sweep_levels(g, t, together, 1)[0];
  CHECK(curve.peak == 12);
  CHECK(curve.peak_time == 10);
}

TEST_CASE("levels: changes in runs give the curve of the same changes sorted", "[engine][levels]") {
  // Four runs: two in order, two not (sorted on their own), and long enough (2,000 and 500
  // changes) for the radix sort; the curve must be the one level_curve gives for the same changes.
  std::vector<Time> take, give, in, out;
  for (Time i = 0; i < 2000; ++i) take.push_back(10 * i);           // acquisitions of 3, in order
  for (Time i = 0; i < 2000; ++i) give.push_back(10 * i + 25);      // their releases, in order
  for (Time i = 0; i < 500; ++i) in.push_back((i * 7919) % 20000);  // acquisitions of 1, out of order
  for (Time i = 0; i < 500; ++i) out.push_back((i * 7919) % 20000 + 5);
  std::vector<LevelChange> all;
  for (const Time t : take) all.push_back({t, 3});
  for (const Time t : give) all.push_back({t, -3});
  for (const Time t : in) all.push_back({t, 1});
  for (const Time t : out) all.push_back({t, -1});
  std::vector<LevelChange> change_scratch;
  const LevelCurve sorted = level_curve(all, change_scratch);
  std::vector<Time> scratch;
  const std::vector<LevelRun> runs = {{take, 3}, {give, -3}, {in, 1}, {out, -1}};
  const LevelCurve merged = level_curve_of_runs(runs, scratch);
  CHECK(merged.steps == sorted.steps);
  CHECK(merged.peak == sorted.peak);
  CHECK(merged.peak_time == sorted.peak_time);
  CHECK(std::is_sorted(in.begin(), in.end()));  // sorted in place
  // Three acquisitions of 3 overlap (each lasts 25 ns, one every 10 ns), plus at most one of 1.
  CHECK(merged.peak == 10);
  CHECK(merged.peak_time == 43);
  CHECK(merged.steps.front() == std::pair<Time, std::int64_t>{0, 4});
  CHECK(merged.steps.back() == std::pair<Time, std::int64_t>{20015, 0});
  // The peak alone, from the runs read together: the curve's.
  const LevelPeak peak = level_peaks_of_runs(runs, scratch).first;
  CHECK(peak.peak == 10);
  CHECK(peak.time == 43);
}

TEST_CASE("runs that move only the second level leave the curve empty and give that level's peak", "[level]") {
  // A device holding no bytes still counts its resident micro-batches (measure's delta2).
  std::vector<Time> take = {10, 20, 30}, give = {25, 35, 45};
  std::vector<Time> scratch;
  const std::vector<LevelRun> runs = {{take, 0, 1}, {give, 0, -1}};
  LevelPeak second;
  const LevelCurve curve = level_curve_of_runs(runs, scratch, &second);
  CHECK(curve.steps.empty());
  CHECK(curve.peak == 0);
  CHECK(second.peak == 2);  // 20 .. 25: two taken, none given back
  CHECK(second.time == 20);
  const LevelPeaks peaks = level_peaks_of_runs(runs, scratch);
  CHECK(peaks.first.peak == 0);
  CHECK(peaks.second.peak == 2);
  CHECK(peaks.second.time == 20);
  std::vector<LevelChange> zeros = {{5, 0}, {7, 0}};
  std::vector<LevelChange> change_scratch;
  CHECK(level_curve(zeros, change_scratch).steps.empty());
}

TEST_CASE("the curve and both peaks of runs are those of all the changes sorted at once, random runs", "[level]") {
  // Up to 16 runs are read side by side, more are merged: both ways are drawn.
  std::mt19937_64 rng(17);
  std::vector<LevelChange> change_scratch;
  std::vector<Time> scratch;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::vector<Time>> times;
    std::vector<std::int64_t> deltas, deltas2;
    std::vector<LevelChange> changes, changes2;
    const int runs = 1 + static_cast<int>(rng() % (trial % 4 == 0 ? 30 : 9));
    for (int r = 0; r < runs; ++r) {
      const int n = static_cast<int>(rng() % (trial % 3 == 0 ? 200 : 12));  // some runs empty, some long
      const bool ordered = rng() % 4 != 0;
      const auto delta = static_cast<std::int64_t>(rng() % 21) - 10;
      const auto delta2 = static_cast<std::int64_t>(rng() % 5) - 2;
      Time t = static_cast<Time>(rng() % 50);
      times.emplace_back();
      deltas.push_back(delta);
      deltas2.push_back(delta2);
      if (r > 0 && rng() % 3 == 0) times.back() = times[rng() % r];  // the same times as an earlier run
      for (int i = 0; i < n && (r == 0 || times.back().empty()); ++i) {
        t = ordered ? t + static_cast<Time>(rng() % 4) : static_cast<Time>(rng() % 400);  // many equal times
        times.back().push_back(t);
      }
      for (const Time u : times.back()) {
        changes.push_back({u, delta});
        changes2.push_back({u, delta2});
      }
    }
    std::vector<LevelRun> level_runs;
    for (int r = 0; r < runs; ++r) level_runs.push_back({times[r], deltas[r], deltas2[r]});
    // Against the curves of all the changes sorted at once (no runs).
    const LevelCurve whole = level_curve(changes, change_scratch);
    const LevelCurve whole2 = level_curve(changes2, change_scratch);
    const LevelPeaks peaks = level_peaks_of_runs(level_runs, scratch);
    LevelPeak second;
    const LevelCurve curve = level_curve_of_runs(level_runs, scratch, &second);
    INFO("trial " << trial);
    CHECK(second.peak == whole2.peak);
    CHECK(second.time == whole2.peak_time);
    CHECK(curve.steps == whole.steps);
    CHECK(curve.peak == whole.peak);
    CHECK(curve.peak_time == whole.peak_time);
    CHECK(peaks.first.peak == whole.peak);
    CHECK(peaks.first.time == whole.peak_time);
    CHECK(peaks.second.peak == whole2.peak);
    CHECK(peaks.second.time == whole2.peak_time);
  }
}
