#include "schedules/lowering/rl/rl_weights_sim.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "sim/checked.hpp"

namespace stepsim {

void check_colocate(const ColocateSpec& spec) {
  if (spec.capacity <= 0) throw SpecError("capacity", "must be positive");
  if (spec.bandwidth <= 0) throw SpecError("bandwidth", "must be positive");
  if (spec.states.empty()) throw SpecError("states", "list the states the card holds");
  if (spec.orders.empty()) throw SpecError("orders", "give at least one switch order");
  for (const auto& order : spec.orders) {
    std::set<std::string> seen;
    for (const auto& step : order.steps) {
      const std::string key = "orders." + order.name;
      if (!find_state(spec, step.state)) throw SpecError(key, fmt::format("unknown state '{}'", step.state));
      if (!seen.insert(step.state).second)
        throw SpecError(key,
                        fmt::format("state '{}' appears twice: each state is loaded or released once", step.state));
    }
  }
}

std::vector<ColocateRun> simulate_colocate(const ColocateSpec& spec) {
  check_colocate(spec);
  std::vector<ColocateRun> runs;
  runs.reserve(spec.orders.size());
  for (const auto& order : spec.orders) {
    ColocateRun& r = runs.emplace_back();
    r.order = order.name;
    OpGraph& g = r.graph;
    const ResourceId card = g.add_resource("card");
    const OpId train = g.add_op(card, spec.training);
    r.step.push_back("training");
    std::vector<OpId> step_ops;
    for (const auto& step : order.steps) {
      const CardState& s = *find_state(spec, step.state);
      step_ops.push_back(g.add_op(card, s.allocated ? 0 : transfer_time(s.size, spec.bandwidth)));
      r.step.push_back((step.load ? "+" : "-") + step.state);
    }
    const OpId gen = g.add_op(card, spec.generation);
    r.step.push_back("generation");
    g.set_namer([names = r.step](OpId op) { return names[op]; });

    std::vector<Hold> holds;
    for (const auto& s : spec.states) {
      Mark from{train, OpPoint::Start}, until{gen, OpPoint::End};
      for (std::size_t i = 0; i < order.steps.size(); ++i) {
        if (order.steps[i].state != s.name) continue;
        if (order.steps[i].load)
          from = {step_ops[i], OpPoint::Start};
        else
          until = {step_ops[i], OpPoint::End};
      }
      holds.push_back({0, s.size, from, until});
    }
    r.timeline = run(g);
    r.memory = sweep_levels(g, r.timeline, holds, 1)[0];
    // Alone levels, read off the curve: while training runs, and once generation has started.
    const auto level_at = [&](Time t) {
      std::int64_t level = 0;
      for (const auto& [when, v] : r.memory.steps)
        if (when <= t) level = v;
      return level;
    };
    r.before = level_at(r.timeline.start[train]);
    r.after = level_at(r.timeline.start[gen]);
    r.peak = r.memory.peak;
    r.peak_time = r.memory.peak_time;
    r.fits = r.peak <= spec.capacity;
    // The op in progress at the peak (a zero-time step starting there if none spans it).
    for (OpId op = 0; op < g.op_count(); ++op)
      if (r.timeline.start[op] <= r.peak_time && r.peak_time < r.timeline.end(g, op)) r.peak_step = r.step[op];
    if (r.peak_step.empty())
      for (OpId op = 0; op < g.op_count(); ++op)
        if (r.timeline.start[op] == r.peak_time) r.peak_step = r.step[op];
  }
  return runs;
}

void check_weight_transfer(const WeightTransferSpec& spec) {
  if (spec.size <= 0) throw SpecError("size", "must be positive");
  if (spec.receivers < 1) throw SpecError("receivers", "must be at least 1");
  if (spec.senders < 1) throw SpecError("senders", "must be at least 1");
  if (spec.bandwidth <= 0) throw SpecError("bandwidth", "must be positive");
  if (static_cast<std::int64_t>(spec.senders) * spec.receivers > 1'000'000)
    throw SpecError("senders", "senders x receivers is over a million transfers");
  // Sending the full set to every receiver moves size x receivers bytes, counted in int64.
  if (!checked_mul(spec.size, spec.receivers))
    throw SpecError("size",
                    fmt::format("too large: {} receivers x the size would exceed 8 EiB of traffic", spec.receivers));
}

std::vector<TransferRun> simulate_weight_transfer(const WeightTransferSpec& spec) {
  check_weight_transfer(spec);
  std::vector<TransferRun> runs;
  for (WeightDistribution mode : {WeightDistribution::FullSet, WeightDistribution::ByShard}) {
    TransferRun& r = runs.emplace_back();
    r.mode = mode;
    OpGraph& g = r.graph;
    for (int s = 0; s < spec.senders; ++s)
      r.links.push_back(g.add_resource(fmt::format("sender {} link", s), Discipline::Fifo, spec.latency));
    r.received.assign(spec.receivers, 0);
    for (int s = 0; s < spec.senders; ++s) {
      const Bytes have0 = share_begin(spec.size, spec.senders, s), have1 = share_begin(spec.size, spec.senders, s + 1);
      for (int rc = 0; rc < spec.receivers; ++rc) {
        Bytes need0 = 0, need1 = spec.size;
        if (mode == WeightDistribution::ByShard) {
          need0 = share_begin(spec.size, spec.receivers, rc);
          need1 = share_begin(spec.size, spec.receivers, rc + 1);
        }
        const Bytes bytes = std::max<Bytes>(0, std::min(have1, need1) - std::max(have0, need0));
        if (bytes == 0) continue;
        const OpId op = g.add_op(r.links[s], transfer_time(bytes, spec.bandwidth));
        r.sends.push_back({s, rc, bytes, op});
        r.total += bytes;
        r.received[rc] += bytes;
      }
    }
    std::vector<std::string> names;
    for (const auto& send : r.sends)
      names.push_back(fmt::format("sender {} -> receiver {}", send.sender, send.receiver));
    g.set_namer([names](OpId op) { return names[op]; });
    r.timeline = run(g);
    r.time = r.timeline.makespan;
  }
  return runs;
}

}  // namespace stepsim
