#include "schedules/lowering/data_parallel/data_parallel_spec.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "schedules/lowering/data_parallel/data_parallel.hpp"
#include "sim/checked.hpp"
#include "sim/engine.hpp"
#include "sim/op_graph.hpp"

namespace stepsim {

std::string_view backward_order_name(BackwardOrder o) {
  switch (o) {
    case BackwardOrder::Fused: return "fused";
    case BackwardOrder::InputFirst: return "dx_first";
    case BackwardOrder::WeightFirst: return "dw_first";
  }
  return "?";
}

std::optional<BackwardOrder> parse_backward_order(std::string_view text) {
  for (auto o : {BackwardOrder::Fused, BackwardOrder::InputFirst, BackwardOrder::WeightFirst})
    if (text == backward_order_name(o)) return o;
  return std::nullopt;
}

std::string_view link_kind_name(LinkKind k) {
  switch (k) {
    case LinkKind::Pcie: return "PCIe";
    case LinkKind::PeerLink: return "peer link";
    case LinkKind::HostNic: return "host NIC";
  }
  return "?";
}

namespace {

constexpr const char* kSection = "data_parallel";
std::string key(const char* k) { return fmt::format("{}.{}", kSection, k); }

// Time of `flops` at `flops_per_second`, rounded to the nanosecond once (never accumulated).
Time compute_time(double flops, double flops_per_second) {
  return time_from_ns(flops / flops_per_second * static_cast<double>(kSecond),
                      "the compute time (FLOPs / (peak x efficiency))");
}

// The units of one micro-batch of a transformer: the embedding, each decoder layer, the LM head
// (with the final norm). Compute from forward_flops_per_token: forward, dX = matmul + 2 x
// attention core (QK^T and AV backward have no weights), dW = matmul.
std::vector<DataParallelUnit> transformer_units(const DataParallelSpec& s) {
  const TransformerConfig& m = *s.model;
  if (s.accelerator.peak_bf16_flops <= 0)
    throw SpecError(key("accelerator"), "the model's compute needs an accelerator with a peak");
  if (!(s.efficiency > 0 && s.efficiency <= 1)) throw SpecError(key("efficiency"), "efficiency must be in (0, 1]");
  if (s.sequence_length < 1) throw SpecError(key("sequence_length"), "sequence_length must be at least 1");
  if (s.microbatch_size < 1) throw SpecError(key("microbatch_size"), "microbatch_size must be at least 1");
  if (s.weight_bytes < 1 || s.gradient_bytes < 1)
    throw SpecError(key("weight_bytes"), "bytes per parameter must be at least 1");
  const ParameterCount p = count_parameters(m);
  const ForwardFlopsPerToken f = forward_flops_per_token(m, s.sequence_length);
  const double tokens = static_cast<double>(s.sequence_length) * s.microbatch_size;
  const double rate = s.accelerator.peak_bf16_flops * s.efficiency;
  const auto unit = [&](std::string name, double matmul, double attention, std::int64_t params) {
    DataParallelUnit u;
    u.name = std::move(name);
    u.forward = compute_time((matmul + attention) * tokens, rate);
    u.backward_input = compute_time((matmul + 2 * attention) * tokens, rate);
    u.backward_weight = compute_time(matmul * tokens, rate);
    u.weights = params * s.weight_bytes;
    u.gradients = params * s.gradient_bytes;
    return u;
  };
  std::vector<DataParallelUnit> units;
  units.push_back(unit("embedding", f.embedding, 0, p.embedding));
  for (int l = 0; l < m.layers; ++l)
    units.push_back(unit(fmt::format("layer {}", l), f.layer_matmul, f.layer_attention, p.per_layer));
  units.push_back(unit("head", f.head, 0, p.lm_head + p.final_norm));
  return units;
}

void check_spec(const DataParallelSpec& s) {
  if (s.cards < 1) throw SpecError(key("cards"), "cards must be at least 1");
  if (s.host.cards < 1) throw SpecError(key("cards_per_host"), "cards_per_host must be at least 1");
  if (s.microbatches < 1) throw SpecError(key("microbatches"), "microbatches must be at least 1");
  if (s.prefetch < 0) throw SpecError(key("prefetch"), "prefetch must be 0 or more");
  if (s.zero_stage != 0 && s.zero_stage != 3)
    throw SpecError(key("zero_stage"),
                    fmt::format("zero_stage {} is not simulated (0 = DDP, 3 = ZeRO-3)", s.zero_stage));
  if (s.bucket_size < 1) throw SpecError(key("bucket_size"), "bucket_size must be positive");
  if (s.alpha < 0 || s.input_wait < 0) throw SpecError(key("alpha"), "times must not be negative");
}

// Where the traffic is limited: a card's lane (PCIe, or the peer link inside one P2P host),
// or, across hosts, the host's NICs when slower. A ring crosses each host boundary once per
// direction, so the host's cross-host traffic per collective equals one card's (n-1)/n S,
// spread over its NICs unless the cards share one.
void choose_link(const DataParallelSpec& s, DataParallelPlan& plan) {
  const std::int64_t lane = s.link_bandwidth > 0 ? s.link_bandwidth : s.accelerator.host_link;
  const std::int64_t hosts = ceil_div(s.cards, s.host.cards);
  plan.link = LinkKind::Pcie;
  plan.link_bandwidth = lane;
  if (hosts == 1 && s.link_bandwidth == 0 && s.accelerator.p2p && s.accelerator.peer_link > 0) {
    plan.link = LinkKind::PeerLink;
    plan.link_bandwidth = s.accelerator.peer_link;
  } else if (hosts > 1) {
    if (s.host.nics < 1 || s.host.nic_bandwidth <= 0)
      throw SpecError(key("nic"),
                      fmt::format("{} cards span {} hosts: give nic.count and nic.bandwidth", s.cards, hosts));
    std::int64_t nic = s.host.nic_bandwidth;
    if (!s.host.cards_share_nic) {
      const auto all_nics = checked_mul(nic, s.host.nics);
      if (!all_nics)
        throw SpecError(key("nic"), fmt::format("{} NICs of {} bytes/s are too many to add up", s.host.nics, nic));
      nic = *all_nics;
    }
    if (lane <= 0 || nic < lane) {
      plan.link = LinkKind::HostNic;
      plan.link_bandwidth = nic;
    }
  }
  if (s.cards > 1 && plan.link_bandwidth <= 0)
    throw SpecError(key("link_bandwidth"),
                    "no link bandwidth: give link_bandwidth or an accelerator with a PCIe bandwidth");
}

// Per unit: compute times and, for ZeRO-3, its gather and reduction.
void plan_units(const DataParallelSpec& s, const std::vector<DataParallelUnit>& units, DataParallelPlan& plan) {
  const bool split = s.backward_order != BackwardOrder::Fused;
  for (const auto& u : units) {
    if (split && !u.backward_split)
      throw SpecError(fmt::format("{}.layers.{}", kSection, u.name),
                      fmt::format("backward_order {} needs backward_input and backward_weight",
                                  backward_order_name(s.backward_order)));
    DataParallelPlan::Unit pu;
    pu.name = u.name;
    pu.forward = u.forward;
    pu.backward_input = u.backward_input;
    pu.backward_weight = u.backward_weight;
    if (plan.zero3 && s.cards > 1) {
      pu.has_gather = u.weights > 0 || u.gather.has_value();
      pu.gather =
          u.gather.value_or(collective_time(Collective::AllGather, s.cards, u.weights, s.alpha, plan.link_bandwidth));
      pu.gather_bytes = ring_bytes_per_member(Collective::AllGather, s.cards, u.weights);
      pu.has_reduce = u.gradients > 0 || u.reduce.has_value();
      pu.reduce = u.reduce.value_or(
          collective_time(Collective::ReduceScatter, s.cards, u.gradients, s.alpha, plan.link_bandwidth));
      pu.reduce_bytes = ring_bytes_per_member(Collective::ReduceScatter, s.cards, u.gradients);
    }
    plan.units.push_back(std::move(pu));
  }
}

// DDP buckets, filled in the order gradients are produced (last unit first), closed when they
// reach the cap (PyTorch DDP's bucket_cap_mb rule). A unit with an explicit reduction time is
// a bucket of its own.
void plan_buckets(const DataParallelSpec& s, const std::vector<DataParallelUnit>& units, DataParallelPlan& plan) {
  DataParallelPlan::Bucket open;
  const auto close = [&] {
    if (open.units.empty()) return;
    open.duration = collective_time(Collective::AllReduce, s.cards, open.bytes, s.alpha, plan.link_bandwidth);
    open.wire_bytes = ring_bytes_per_member(Collective::AllReduce, s.cards, open.bytes);
    plan.buckets.push_back(open);
    open = {};
  };
  for (int i = static_cast<int>(units.size()) - 1; i >= 0; --i) {
    const auto& u = units[i];
    if (u.reduce) {
      close();
      plan.buckets.push_back(
          {{i}, *u.reduce, u.gradients, ring_bytes_per_member(Collective::AllReduce, s.cards, u.gradients)});
      continue;
    }
    if (u.gradients <= 0) continue;
    open.units.push_back(i);
    open.bytes += u.gradients;
    if (open.bytes >= s.bucket_size) close();
  }
  close();
}

// A straggler unfolds the ranks: every card is simulated, each with its compute multiplier.
void plan_stragglers(const DataParallelSpec& s, DataParallelPlan& plan) {
  for (const auto& [card, scale] : s.stragglers) {
    if (card < 0 || card >= s.cards)
      throw SpecError(key("stragglers"),
                      fmt::format("card {} is not one of the {} cards (0 to {})", card, s.cards, s.cards - 1));
    if (!(scale > 0))
      throw SpecError(key("stragglers"), fmt::format("card {}: the compute multiplier must be positive", card));
  }
  plan.fold = s.fold && s.stragglers.empty();
  if (!s.stragglers.empty()) {
    plan.compute_scale.assign(s.cards, 1.0);
    for (const auto& [card, scale] : s.stragglers) plan.compute_scale[card] = scale;
  }
}

}  // namespace

DataParallelPlan plan_data_parallel(const DataParallelSpec& s) {
  check_spec(s);
  DataParallelPlan plan;
  plan.cards = s.cards;
  plan.cards_per_host = s.host.cards;
  plan.microbatches = s.microbatches;
  plan.zero3 = s.zero_stage == 3;
  plan.prefetch = s.prefetch;
  plan.keep_gathered = s.keep_gathered;
  plan.order = s.backward_order;
  plan.input_wait = s.input_wait;
  choose_link(s, plan);
  std::vector<DataParallelUnit> units = s.units;
  if (units.empty()) {
    if (!s.model) throw SpecError(key("model"), "give a model, or explicit layers");
    units = transformer_units(s);
  }
  // A card's compute ops, at most 3 per micro-batch and unit (forward; input and weight
  // gradients), counted before the order allocates them: past the op limit (--max-ops) or int,
  // the step is too large.
  const double ops = 3.0 * s.microbatches * static_cast<double>(units.size());
  constexpr double kIntMax = 2147483647.0;  // the order's op positions are ints
  const double limit = op_limit() > 0 ? std::min(static_cast<double>(op_limit()), kIntMax) : kIntMax;
  if (ops > limit)
    throw SpecError(key("microbatches"),
                    fmt::format("too large: {} micro-batches x {} units are about {:.2g} ops per card, over the op "
                                "limit {:.0f} (--max-ops, --max-memory)",
                                s.microbatches, units.size(), ops, limit));
  plan_units(s, units, plan);
  if (!plan.zero3 && s.cards > 1) plan_buckets(s, units, plan);
  plan_stragglers(s, plan);
  return plan;
}

DataParallelRun run_data_parallel(const DataParallelSpec& spec) {
  DataParallelRun out;
  out.plan = plan_data_parallel(spec);
  out.program = lower_data_parallel(out.plan);
  out.timeline = stepsim::run(out.program->graph);
  out.result = measure_data_parallel(out.plan, *out.program, out.timeline);
  return out;
}

DataParallelResult simulate_data_parallel(const DataParallelSpec& spec) { return run_data_parallel(spec).result; }

StepCommSource data_parallel_step_comm(DataParallelSpec base) {
  return [base = std::move(base)](const StepShape& shape) {
    DataParallelSpec spec = base;
    spec.cards = shape.cards;
    spec.microbatches = shape.microbatches_per_card;
    spec.efficiency = shape.efficiency;
    spec.input_wait = shape.input_wait;
    const DataParallelResult r = simulate_data_parallel(spec);
    return StepComm{r.link_time, r.exposed_comm, "data-parallel step simulation"};
  };
}

}  // namespace stepsim
