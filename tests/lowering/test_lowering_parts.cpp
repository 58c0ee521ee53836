// The three parts of the data-parallel, RL and MoE lowerings, each on its own: the order, the
// communication plan (and its checker), then the op emission, on cases small enough to write out
// by hand. Specs are built in C++: nothing here reads YAML.
#include <catch2/catch.hpp>

#include <tuple>

#include <fmt/format.h>

#include "schedules/lowering/data_parallel/data_parallel.hpp"
#include "schedules/lowering/moe/moe_layer.hpp"
#include "schedules/lowering/rl/rl_loop_sim.hpp"

using namespace stepsim;

namespace {

// Two units (or three), every collective 1 ms, compute 2 ms forward and 4 ms backward.
DataParallelPlan dp_plan(int units, int microbatches, bool zero3, BackwardOrder order) {
  DataParallelPlan p;
  p.cards = 2;
  p.cards_per_host = 2;
  p.microbatches = microbatches;
  p.zero3 = zero3;
  p.prefetch = 1;
  p.order = order;
  for (int u = 0; u < units; ++u) {
    DataParallelPlan::Unit x;
    x.name = fmt::format("u{}", u);  // not "u" + to_string: GCC 12 warns falsely (-Wrestrict)
    x.forward = 2 * kMillisecond;
    x.backward_input = x.backward_weight = 2 * kMillisecond;
    x.gather = x.reduce = kMillisecond;
    x.gather_bytes = x.reduce_bytes = 1000;
    x.has_gather = x.has_reduce = zero3;
    p.units.push_back(x);
  }
  return p;
}

// (kind, issue_after, consumer, unit, micro) of each collective, in issue order.
using Issue = std::tuple<DpOp, int, int, int, int>;
std::vector<Issue> issues(const std::vector<DpCollective>& colls) {
  std::vector<Issue> out;
  for (const auto& c : colls) out.emplace_back(c.kind, c.issue_after, c.consumer, c.unit, c.micro);
  return out;
}

}  // namespace

TEST_CASE("data-parallel order: forwards in unit order, backwards reversed, per micro-batch",
          "[lowering][data_parallel]") {
  const DpComputeOrder fused = data_parallel_order(dp_plan(2, 2, true, BackwardOrder::Fused));
  CHECK(fused.positions == std::vector<DpPosition>{{0, 0, false},
                                                   {0, 1, false},
                                                   {0, 1, true},
                                                   {0, 0, true},
                                                   {1, 0, false},
                                                   {1, 1, false},
                                                   {1, 1, true},
                                                   {1, 0, true}});
  CHECK(fused.ops_per_card == 8);
  CHECK(fused.ops[1] == DpPositionOps{1, -1, 1});  // a forward has no gradient op
  CHECK(fused.ops[2] == DpPositionOps{2, 2, 2});   // a fused backward is its own gradient op

  // Split backwards take two ops; the gradient is dW, second with dX first, first with dW first.
  const DpComputeOrder dx_first = data_parallel_order(dp_plan(2, 2, true, BackwardOrder::InputFirst));
  CHECK(dx_first.ops_per_card == 12);
  CHECK(dx_first.ops[2] == DpPositionOps{2, 3, 3});
  CHECK(dx_first.ops[7] == DpPositionOps{10, 11, 11});
  const DpComputeOrder dw_first = data_parallel_order(dp_plan(2, 2, true, BackwardOrder::WeightFirst));
  CHECK(dw_first.ops[2] == DpPositionOps{2, 2, 3});
}

TEST_CASE("data-parallel ZeRO-3 plan: gathers prefetch one unit ahead, reductions before gathers",
          "[lowering][data_parallel]") {
  const DataParallelPlan plan = dp_plan(2, 2, true, BackwardOrder::Fused);
  const DpComputeOrder order = data_parallel_order(plan);
  const auto colls = data_parallel_collectives(plan, order);
  using enum DpOp;
  // Gather k is issued after computation k - 2 ends (prefetch 1); at issue point 2 the
  // ReduceScatter of u1's gradient goes before the gather for micro-batch 1's forward.
  CHECK(issues(colls) == std::vector<Issue>{{Gather, -1, 0, 0, 0},
                                            {Gather, -1, 1, 1, 0},
                                            {Gather, 0, 2, 1, 0},
                                            {Gather, 1, 3, 0, 0},
                                            {ReduceScatter, 2, -1, 1, 0},
                                            {Gather, 2, 4, 0, 1},
                                            {ReduceScatter, 3, -1, 0, 0},
                                            {Gather, 3, 5, 1, 1},
                                            {Gather, 4, 6, 1, 1},
                                            {Gather, 5, 7, 0, 1},
                                            {ReduceScatter, 6, -1, 1, 1},
                                            {ReduceScatter, 7, -1, 0, 1}});
  CHECK(check_collectives(order, colls).empty());

  auto late = colls;
  late[2].issue_after = 2;  // the backward gather of u1 after its own consumer started
  const auto problems = check_collectives(order, late);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0] == "collective 2: issued after its consumer starts");
  CHECK(problems[1] == "collective 3: issued out of order");
}

TEST_CASE("data-parallel DDP plan: one AllReduce per bucket after its last gradient of the last micro-batch",
          "[lowering][data_parallel]") {
  DataParallelPlan plan = dp_plan(3, 2, false, BackwardOrder::Fused);
  plan.buckets = {{{2, 1}, kMillisecond, 2000, 2000}, {{0}, kMillisecond, 1000, 1000}};
  const DpComputeOrder order = data_parallel_order(plan);
  const auto colls = data_parallel_collectives(plan, order);
  // Micro-batch 1's backwards sit at positions 9 (u2), 10 (u1), 11 (u0).
  CHECK(issues(colls) == std::vector<Issue>{{DpOp::AllReduce, 10, -1, 1, 1}, {DpOp::AllReduce, 11, -1, 0, 1}});
  CHECK(colls[0].bucket == 0);
  CHECK(check_collectives(order, colls).empty());
}

TEST_CASE("data-parallel emission: one representative card, compute then collectives in issue order",
          "[lowering][data_parallel]") {
  const DataParallelPlan plan = dp_plan(2, 1, true, BackwardOrder::Fused);
  const DpComputeOrder order = data_parallel_order(plan);
  const auto colls = data_parallel_collectives(plan, order);
  const auto prog = emit_data_parallel(plan, order, colls);
  // Folded: card 0 only, so no join ops: 4 compute ops then 4 gathers and 2 reductions.
  CHECK(prog->cards == std::vector<int>{0});
  REQUIRE(prog->graph.op_count() == 10);
  CHECK(prog->collectives == 6);
  CHECK(prog->bytes_per_card == 6000);
  CHECK(prog->graph.op_name(0) == "card 0 F u0 mb0");
  CHECK(prog->graph.op_name(3) == "card 0 B u0 mb0");
  CHECK(prog->graph.op_name(4) == "card 0 AG u0 fwd mb0");
  CHECK(prog->graph.op_name(9) == "card 0 RS u0 mb0");

  DataParallelPlan unfolded = plan;
  unfolded.fold = false;
  const auto both = emit_data_parallel(unfolded, order, colls);
  // Two cards: 8 compute ops, per collective 2 lane ops and one join.
  CHECK(both->graph.op_count() == 8 + 6 * 3);
}

namespace {

RlLoopSpec rl_spec(RlMode mode, WeightUpdates updates) {
  RlLoopSpec s;
  s.mode = mode;
  s.max_staleness = 1;
  s.updates = updates;
  s.interrupted = Interrupted::Resume;
  s.batches = 2;
  s.batch_size = 2;
  s.generation.workers = 2;
  s.generation.length = DurationDist{DurationDist::Kind::Fixed, 10 * kMillisecond, 0};
  if (updates == WeightUpdates::InFlight) s.generation.chunk = 4 * kMillisecond;
  s.learning.workers = 1;
  s.learning.batch_time = DurationDist{DurationDist::Kind::Fixed, 5 * kMillisecond, 0};
  s.sync = kMillisecond;
  return s;
}

using Step = RlGeneratorStep;
Step traj(int id) { return {id, -1}; }
Step sync_to(int k) { return {-1, k}; }

}  // namespace

TEST_CASE("RL work: trajectories dealt round-robin, batches shared by the learner", "[lowering][rl]") {
  const RlWork w = rl_work(rl_spec(RlMode::Synchronous, WeightUpdates::BetweenBatches));
  REQUIRE(w.trajectories.size() == 4);
  CHECK(w.per_generator == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
  CHECK(w.trajectories[3].batch == 1);
  CHECK(w.trajectories[3].length == 10 * kMillisecond);
  CHECK(w.trajectories[3].learner == 0);
  CHECK(w.batch_learned_ids == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  CHECK(w.learn_time == std::vector<std::vector<Time>>{{5 * kMillisecond}, {5 * kMillisecond}});
}

TEST_CASE("RL sync plan: where each generator syncs, and what waits for a publish", "[lowering][rl]") {
  SECTION("synchronous, between batches: sync(k) right after batch k") {
    const RlLoopSpec spec = rl_spec(RlMode::Synchronous, WeightUpdates::BetweenBatches);
    const RlWork w = rl_work(spec);
    const RlSyncPlan plan = rl_sync_plan(spec, w);
    CHECK(plan.steps[0] == std::vector<Step>{traj(0), sync_to(0), traj(2), sync_to(1)});
    CHECK(plan.steps[1] == std::vector<Step>{traj(1), sync_to(0), traj(3), sync_to(1)});
    CHECK(plan.publish_after[0] == std::vector<int>{0, 2});  // publish(k) waits for the step before sync(k)
    CHECK(plan.gate == std::vector<int>{-1, -1, -1, -1});
    CHECK(check_sync_plan(spec, w, plan).empty());

    RlSyncPlan swapped = plan;
    std::swap(swapped.steps[0][1], swapped.steps[0][2]);
    CHECK_FALSE(check_sync_plan(spec, w, swapped).empty());
  }
  SECTION("asynchronous (staleness 1): generation runs a batch ahead") {
    const RlLoopSpec spec = rl_spec(RlMode::Asynchronous, WeightUpdates::BetweenBatches);
    const RlWork w = rl_work(spec);
    const RlSyncPlan plan = rl_sync_plan(spec, w);
    CHECK(plan.steps[0] == std::vector<Step>{traj(0), traj(2), sync_to(0), sync_to(1)});
    CHECK(plan.publish_after[0] == std::vector<int>{1, 2});
    CHECK(check_sync_plan(spec, w, plan).empty());
  }
  SECTION("in flight: syncs first in id order, batch 1 gated by publish(0)") {
    const RlLoopSpec spec = rl_spec(RlMode::Synchronous, WeightUpdates::InFlight);
    const RlWork w = rl_work(spec);
    const RlSyncPlan plan = rl_sync_plan(spec, w);
    CHECK(plan.chained);
    CHECK(plan.steps[1] == std::vector<Step>{sync_to(0), sync_to(1), traj(1), traj(3)});
    CHECK(plan.publish_after[1] == std::vector<int>{-1, -1});
    CHECK(plan.gate == std::vector<int>{-1, -1, 0, 0});
    CHECK(check_sync_plan(spec, w, plan).empty());
  }
}

TEST_CASE("RL emission: publishes, generator steps, learner ops, in that id order", "[lowering][rl]") {
  const RlLoopSpec spec = rl_spec(RlMode::Synchronous, WeightUpdates::InFlight);
  RlWork w = rl_work(spec);
  const RlSyncPlan plan = rl_sync_plan(spec, w);
  const auto prog = emit_rl_loop(spec, std::move(w), plan);
  // 2 publishes; per generator 2 syncs and 2 trajectories of 3 chunks (4 + 4 + 2 ms); the
  // learner's learn and sync per batch.
  REQUIRE(prog->graph.op_count() == 2 + 2 * (2 + 2 * 3) + 2 * 2);
  CHECK(prog->graph.op_name(0) == "publish v1");
  CHECK(prog->graph.op_name(2) == "sync v1 (generation 0)");
  CHECK(prog->graph.op_name(4) == "generate traj 0 chunk 0 (generator 0)");
  CHECK(prog->graph.op_duration(6) == 2 * kMillisecond);  // the last chunk: what is left
  CHECK(prog->trajectories[2].first_op == 7);
  CHECK(prog->learn[1][0] == 2 + 16 + 2);
}

namespace {

MoeLayerSpec moe_spec(ExpertPlacement placement) {
  MoeLayerSpec s;
  s.shape.experts = 4;
  s.shape.top_k = 1;
  s.shape.tokens = 7;
  s.cards = 2;
  s.placement = placement;
  s.row_time = 100;
  s.row_bytes = 1000;
  s.link_bandwidth = 1'000'000'000;  // 1 byte/ns
  return s;
}

ExpertLoads moe_loads() {
  ExpertLoads l;
  l.kept = l.computed = l.routed = {4, 1, 2, 0};
  return l;
}

}  // namespace

TEST_CASE("MoE order: experts per card in id order", "[lowering][moe]") {
  const MoeExpertOrder contiguous = moe_expert_order(moe_spec(ExpertPlacement::Contiguous));
  CHECK(contiguous.card == std::vector<int>{0, 0, 1, 1});
  CHECK(contiguous.per_card == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  const MoeExpertOrder round_robin = moe_expert_order(moe_spec(ExpertPlacement::RoundRobin));
  CHECK(round_robin.per_card == std::vector<std::vector<int>>{{0, 2}, {1, 3}});
}

TEST_CASE("MoE all-to-all plan: rows from the other cards in equal shares, full duplex time", "[lowering][moe]") {
  const MoeLayerSpec spec = moe_spec(ExpertPlacement::Contiguous);
  const ExpertLoads loads = moe_loads();
  const MoeExpertOrder order = moe_expert_order(spec);
  const MoeCommPlan plan = moe_comm_plan(spec, loads, order);
  // Expert 0 (card 0) gets 2 of its 4 rows from card 1; expert 1's single row is card 0's share
  // (the first kept mod cards cards give one more) and stays local; expert 2 (card 1) gets 1 of 2
  // from card 0.
  CHECK(plan.traffic[0].rows_sent == 1);
  CHECK(plan.traffic[0].rows_received == 2);
  CHECK(plan.traffic[1].rows_sent == 2);
  CHECK(plan.traffic[1].rows_received == 1);
  // max(sent, received) = 2 rows x 1000 B at 1 B/ns.
  CHECK(plan.all_to_all == std::vector<Time>{2000, 2000});
  CHECK(check_comm_plan(spec, loads, order, plan).empty());

  MoeCommPlan lost = plan;
  lost.traffic[1].rows_received = 0;
  CHECK(check_comm_plan(spec, loads, order, lost) == std::vector<std::string>{"3 rows sent, 2 received"});
}

TEST_CASE("MoE emission: dispatch, barrier, experts, barrier, combine", "[lowering][moe]") {
  const MoeLayerSpec spec = moe_spec(ExpertPlacement::Contiguous);
  const ExpertLoads loads = moe_loads();
  const MoeExpertOrder order = moe_expert_order(spec);
  const auto prog = emit_moe_layer(spec, loads, order, moe_comm_plan(spec, loads, order));
  REQUIRE(prog->graph.op_count() == 2 + 1 + 4 + 1 + 2);
  CHECK(prog->graph.op_name(2) == "all-to-all: dispatched");
  CHECK(prog->expert_ops[1] == std::vector<OpId>{5, 6});
  CHECK(prog->graph.op_duration(3) == 400);  // expert 0: 4 rows x 100 ns
  CHECK(prog->graph.op_name(9) == "combine card 1");
  const Timeline t = run(prog->graph);
  // 2 us dispatch, card 0's experts 500 ns (the busiest), 2 us combine.
  CHECK(t.makespan == 2000 + 500 + 2000);
}
