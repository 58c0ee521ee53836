// The book's pipeline event model (reference section 1, figures 10-17 to 10-24), computed by the
// engine from the stated inputs: fill-drain, 1F1B and ZB-H1.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "book_pipeline.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "schedules/pipeline/registry.hpp"
#include "sim/engine.hpp"

using namespace stepsim;

namespace {
constexpr Bytes MiB = 1024 * 1024;

PipelineSpec book(const std::string& schedule, int microbatches = 8) {
  return test::book_pipeline(schedule, microbatches);
}

std::vector<int> resident(const PipelineRun& r) {
  std::vector<int> out;
  for (const auto& d : r.stats.devices) out.push_back(d.peak_resident);
  return out;
}
}  // namespace

TEST_CASE("book step times and idle per device, 8 micro-batches", "[pipeline][book]") {
  struct Row {
    const char* schedule;
    Time step;
    Time idle;
  };
  std::map<std::string, Time> step;
  for (const Row& row : {Row{"fill-drain", 337, 96}, Row{"1f1b", 347, 106}, Row{"zb-h1", 283, 42}}) {
    INFO(row.schedule);
    const auto run = simulate_pipeline(book(row.schedule));
    CHECK(run.stats.step_time == row.step * kMillisecond);
    for (const auto& d : run.stats.devices) CHECK(d.idle == row.idle * kMillisecond);
    CHECK(run.stats.forward_messages == 24);
    CHECK(run.stats.backward_messages == 24);
    step[row.schedule] = run.stats.step_time;
  }
  // 1F1B is about 3% slower than fill-drain (book: 347 / 337), from the simulated steps: 10 ms of
  // 337, 2.967%.
  const double slower = static_cast<double>(step["1f1b"]) / static_cast<double>(step["fill-drain"]) - 1.0;
  CHECK(slower == Approx(10.0 / 337.0).margin(1e-9));
  CHECK(slower == Approx(0.03).margin(0.001));
}

TEST_CASE("book step times at 16 micro-batches", "[pipeline][book]") {
  CHECK(simulate_pipeline(book("1f1b", 16)).stats.step_time == 599 * kMillisecond);
  CHECK(simulate_pipeline(book("zb-h1", 16)).stats.step_time == 523 * kMillisecond);
}

TEST_CASE("1F1B: stage 3 is idle from 93 to 95 ms", "[pipeline][book]") {
  const auto run = simulate_pipeline(book("1f1b"));
  const auto& prog = *run.program;
  const auto iv = resource_intervals(prog.graph, run.timeline, prog.compute[3]);
  bool found = false;
  for (std::size_t k = 0; k + 1 < iv.size(); ++k) {
    if (iv[k].end == 93 * kMillisecond) {
      found = true;
      CHECK(iv[k + 1].start == 95 * kMillisecond);
      // The op before the gap is the 2nd backward; the one after, the 3rd forward.
      CHECK(prog.info[iv[k].op].kind == PipeOp::Backward);
      CHECK(prog.info[iv[k].op].micro == 1);
      CHECK(prog.info[iv[k + 1].op].kind == PipeOp::Forward);
      CHECK(prog.info[iv[k + 1].op].micro == 2);
    }
  }
  CHECK(found);
}

TEST_CASE("peak resident micro-batches per stage", "[pipeline][book]") {
  CHECK(resident(simulate_pipeline(book("fill-drain"))) == std::vector<int>{8, 8, 8, 8});
  CHECK(resident(simulate_pipeline(book("1f1b"))) == std::vector<int>{4, 3, 2, 1});
  // ZB-H1 keeps a micro-batch until its W has run: every stage holds p = 4.
  CHECK(resident(simulate_pipeline(book("zb-h1"))) == std::vector<int>{4, 4, 4, 4});
}

TEST_CASE("peak memory per stage", "[pipeline][book]") {
  const auto fd = simulate_pipeline(book("fill-drain"));
  CHECK(fd.stats.devices[0].peak_memory == 1840 * MiB);  // 8 x 230 MiB
  CHECK(fd.stats.devices[3].peak_memory == 2448 * MiB);  // 8 x 306 MiB
  // Book: 921 MiB. Ours: 920 MiB = 4 x 230. Every gradient message reaches stage 0 exactly when
  // its backward can start (or while stage 0 is idle), so under our rule (a message is held from
  // arrival until its consumer starts, releases first at equal times) none is held at the peak.
  // No single message-accounting rule reproduces all five of the book's peaks; see docs/reference-figures.md.
  const auto f1 = simulate_pipeline(book("1f1b"));
  CHECK(f1.stats.devices[0].peak_memory == 920 * MiB);
  const auto zb = simulate_pipeline(book("zb-h1"));
  CHECK(zb.stats.devices[0].peak_memory == 921 * MiB);  // book: 921 (4 x 230 + one message)
  // Book: 1,226 MiB (4 x 306 + two messages). Ours: 1,224 = 4 x 306; the forward messages into
  // stage 3 arrive as it starts each forward.
  CHECK(zb.stats.devices[3].peak_memory == 1224 * MiB);
  // Fill-drain's peak to 1F1B's: 2,448 -> 920 MiB, about -62% (book: 2.57 GB -> 0.97 GB), from
  // the simulated peaks (largest device of each).
  Bytes fd_peak = 0, f1_peak = 0;
  for (const auto& d : fd.stats.devices) fd_peak = std::max(fd_peak, d.peak_memory);
  for (const auto& d : f1.stats.devices) f1_peak = std::max(f1_peak, d.peak_memory);
  CHECK(fd_peak == 2448 * MiB);
  CHECK(f1_peak == 920 * MiB);
  const double saved = 1.0 - static_cast<double>(f1_peak) / static_cast<double>(fd_peak);
  CHECK(saved == Approx(1.0 - 920.0 / 2448.0).margin(1e-12));
  CHECK(saved == Approx(0.62).margin(0.005));
}

TEST_CASE("with 1 GiB for intermediates only 1F1B fits", "[pipeline][book]") {
  auto spec = book("1f1b");
  spec.capacity = 1024 * MiB;
  int fits = 0;
  for (const char* s : {"fill-drain", "1f1b", "zb-h1"}) {
    spec.schedule = s;
    const auto run = simulate_pipeline(spec);
    Bytes peak = 0;
    for (const auto& d : run.stats.devices) peak = std::max(peak, d.peak_memory);
    if (peak <= *spec.capacity) {
      ++fits;
      CHECK(std::string(s) == "1f1b");
    }
  }
  CHECK(fits == 1);
}

TEST_CASE("zero transfer and update: idle equals the closed forms", "[pipeline][closed-form]") {
  // 1F1B: (p-1)(TF+TB) = 3 x 30 = 90 ms; ZB-H1: (p-1)(TF+TB-TW) = 3 x (10+10-10)... with
  // TB = B_input = 10 and TW = 10: (p-1)(TF + TB + TW) for 1F1B, (p-1)(TF + TB - TW) for ZB-H1
  // (Qi et al. 2024, sec. 3.1): 90 ms and 30 ms.
  for (auto [schedule, idle] : {std::pair{"1f1b", 90}, std::pair{"zb-h1", 30}}) {
    INFO(schedule);
    auto spec = book(schedule);
    spec.latency = 0;
    spec.update.assign(4, 0);
    const auto run = simulate_pipeline(spec);
    for (const auto& d : run.stats.devices) CHECK(d.idle == idle * kMillisecond);
  }
  // Bubble fraction of 1F1B, as the book defines it (bubble / useful compute = (p-1)/m):
  // 37.5% at m = 8 and 18.8% at m = 16.
  for (auto [m, fraction] : {std::pair{8, 0.375}, std::pair{16, 0.1875}}) {
    auto spec = book("1f1b", m);
    spec.latency = 0;
    spec.update.assign(4, 0);
    const auto run = simulate_pipeline(spec);
    const auto& d = run.stats.devices[0];
    CHECK(static_cast<double>(d.idle) / static_cast<double>(d.busy) == Approx(fraction));
  }
}

namespace {
// Where a device's exchanges fall, read off the plan independently of the lowering: the index of
// the last action of the group holding action k (an exchange follows it), and of the first.
int group_end(const PipelinePlan& plan, int d, int k) {
  const auto& paired = plan.paired_with_next.empty() ? std::vector<bool>{} : plan.paired_with_next[d];
  const int n = static_cast<int>(plan.actions[d].size());
  while (k + 1 < n && k < static_cast<int>(paired.size()) && paired[k]) ++k;
  return k;
}
int group_start(const PipelinePlan& plan, int d, int k) {
  const auto& paired = plan.paired_with_next.empty() ? std::vector<bool>{} : plan.paired_with_next[d];
  while (k > 0 && k - 1 < static_cast<int>(paired.size()) && paired[k - 1]) --k;
  return k;
}
}  // namespace

TEST_CASE("blocking sends: a sender waits for its receiver to reach the exchange", "[pipeline][blocking]") {
  // Fill-drain on 2 devices, 3 micro-batches, d1 twice as slow (F 10 / 20 ms, B 20 / 40 ms),
  // messages of latency 1 ms and no link time, no update.
  //  * async: d0's forwards end at 10, 20, 30; d1 runs them from 11, 31, 51 and its backwards from
  //    71 (40 each); their gradients reach d0 at 112, 152, 192, whose last backward ends at 212.
  //  * blocking: F1's message can only leave when d1 has finished F0 (at 31), so d0 waits until 32
  //    to start F2, and F2's message leaves when d1 has finished F1 (52). d1: F2 53-73, backwards
  //    73-113, 114-154, 155-195 (each exchange sends its gradient before the next one starts); d0's
  //    backwards 114-134, 155-175, 196-216.
  PipelinePlan plan = single_route_plan(2, {0, 1}, 3, false);
  for (int d = 0; d < 2; ++d) {
    for (int i = 0; i < 3; ++i) plan.actions[d].push_back({ActionKind::Forward, d, i});
    for (int i = 0; i < 3; ++i) plan.actions[d].push_back({ActionKind::Backward, d, i});
  }
  PipelineCosts costs;
  costs.stages = {StageCost{10 * kMillisecond, 20 * kMillisecond}, StageCost{20 * kMillisecond, 40 * kMillisecond}};
  costs.update = {0, 0};
  costs.latency = kMillisecond;
  PipelinePlan async_plan = plan;  // lower() releases the action lists
  CHECK(run(lower(async_plan, costs)->graph).makespan == 212 * kMillisecond);
  costs.blocking_sends = true;
  const auto prog = lower(plan, costs);
  const Timeline tl = run(prog->graph);
  CHECK(tl.makespan == 216 * kMillisecond);
  const OpGraph& g = prog->graph;
  std::vector<Time> d0, d1;
  for (OpId op = g.first_on(prog->compute[0]); op != kNoOp; op = g.next_on_resource(op)) d0.push_back(tl.start[op]);
  for (OpId op = g.first_on(prog->compute[1]); op != kNoOp; op = g.next_on_resource(op)) d1.push_back(tl.start[op]);
  const auto ms = [](std::vector<Time> v) {
    for (auto& t : v) t /= kMillisecond;
    return v;
  };
  CHECK(ms(d0) == std::vector<Time>{0, 11, 32, 114, 155, 196, 216});
  CHECK(ms(d1) == std::vector<Time>{11, 32, 53, 73, 114, 155, 196});
}

TEST_CASE("blocking sends meet at exchanges, on every schedule whose order allows them", "[pipeline][blocking]") {
  // Megatron-LM's default p2p (batched isend/irecv, then wait): a message moves once the sender
  // has finished its producer's group and the receiver the group before its consumer's, and
  // neither goes on until it is done. Orders written for asynchronous sends deadlock.
  const std::set<std::string> deadlock = {"zb-h2", "dualpipe", "dualpipe-v"};
  for (const auto& family : schedule_families()) {
    INFO(family.name);
    auto spec = book(family.name);
    const PipelinePlan plan = plan_for(spec);  // kept whole: lower() takes copies
    PipelineCosts costs = costs_for(spec, plan);
    PipelinePlan free_plan = plan, blocking_plan = plan;
    const Time free_step = run(lower(free_plan, costs)->graph).makespan;
    costs.blocking_sends = true;
    const auto prog = lower(blocking_plan, costs);
    if (deadlock.count(family.name)) {
      CHECK_THROWS_AS(run(prog->graph), GraphError);
      continue;
    }
    const Timeline tl = run(prog->graph);
    CHECK(tl.makespan >= free_step);
    const OpGraph& g = prog->graph;
    // Per device, its compute ops in program order (the update last), and each action's position.
    std::vector<std::vector<OpId>> stream(plan.devices);
    std::map<std::tuple<int, bool, int, int>, int> position;  // (device, forward?, stage, micro) -> k
    for (int d = 0; d < plan.devices; ++d) {
      for (OpId op = g.first_on(prog->compute[d]); op != kNoOp; op = g.next_on_resource(op)) stream[d].push_back(op);
      for (int k = 0; k < static_cast<int>(plan.actions[d].size()); ++k) {
        const Action& a = plan.actions[d][k];
        if (a.kind == ActionKind::Forward || a.kind == ActionKind::OverlapFB) position[{d, true, a.stage, a.micro}] = k;
        if (a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput)
          position[{d, false, a.stage, a.micro}] = k;
        if (a.kind == ActionKind::OverlapFB) position[{d, false, a.stage2, a.micro2}] = k;
      }
    }
    int sends = 0;
    for (OpId op = 0; op < g.op_count(); ++op) {
      const PipeOpInfo& x = prog->info[op];
      if (!PipelineProgram::is_send(x.kind)) continue;
      ++sends;
      const bool fwd = x.kind == PipeOp::SendForward;
      const int to_stage = fwd ? x.stage + 1 : x.stage - 1;
      const int src_k = position.at({x.device, fwd, x.stage, x.micro});
      const int dst_k = position.at({x.peer(), fwd, to_stage, x.micro});
      const int end = group_end(plan, x.device, src_k), first = group_start(plan, x.peer(), dst_k);
      CHECK(tl.start[op] >= tl.done(g, stream[x.device][end]));
      if (first > 0) CHECK(tl.start[op] >= tl.done(g, stream[x.peer()][first - 1]));
      CHECK(tl.start[stream[x.device][end + 1]] >= tl.done(g, op));  // the update at worst
      CHECK(tl.start[stream[x.peer()][first]] >= tl.done(g, op));
    }
    CHECK(sends == prog->forward_messages + prog->backward_messages);
    CHECK(sends > 0);
    if (family.name == "fill-drain") {
      CHECK(free_step == 337 * kMillisecond);
      CHECK(tl.makespan == 351 * kMillisecond);
    }
  }
}
