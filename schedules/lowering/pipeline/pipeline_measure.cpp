// From a pipeline's Timeline to each device's busy time and memory: measure and pipeline_memory
// (schedules/lowering/pipeline/pipeline.hpp).
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "schedules/lowering/pipeline/pipeline.hpp"
#include "sim/level_runs.hpp"

namespace stepsim {
namespace {

// The memory and resident micro-batch changes of each device, by the lowering rules: its
// activations from each forward's start until the end of its backward (W where split), and each
// message it receives from arrival until its consumer starts. They are listed in runs that are
// already in time order for the usual schedules, so that they merge instead of being sorted: per
// stage the device holds, its forwards' starts, then its backwards' ends (both in program order);
// per link into it, the arrivals (in send order: a FIFO link delivers in order), then its
// consumers' starts (in program order).
//
// The times of every device are gathered in one pass over the ops in id order, into one buffer
// of exactly their number (8 bytes a change: 12 bytes an op for 1F1B), allocated once and not
// zeroed. A device's ops lie a device count apart (the lowering deals them round-robin):
// gathering one device at a time read every cache line of the timeline and the records once per
// device, and stalled on the misses (a third of a large run's CPU); in id order they stream. A
// pass per group of devices in a bounded buffer (4 bytes an op) took three passes at 1M ops, 13 %
// of the run's instructions, to save 8 bytes an op at the peak (docs/performance.md).
class DeviceChanges {
 public:
  DeviceChanges(const PipelinePlan& plan, const PipelineProgram& prog, const Timeline& tl)
      : plan_(plan), prog_(prog), tl_(tl), stages_on_(prog.devices), in_links_(prog.devices) {
    for (int s = 0; s < plan.stages; ++s) {  // stages each device holds on some route, in order
      for (const auto& route : plan.routes)
        if (stages_on_[route[s]].empty() || stages_on_[route[s]].back() != s) stages_on_[route[s]].push_back(s);
    }
    if (prog.message_bytes != 0)
      for (const auto& [link, ends] : prog.link_ends) in_links_[ends.second].push_back(link);
    number_runs();
    count_runs();
    gather();
  }

  // Device d's changes as runs of one delta each, nearly always in time order
  // (sim/level_runs.hpp): of its memory by `delta`, of its resident micro-batches by `delta2`.
  void collect(int d, std::vector<LevelRun>& runs) {
    runs.clear();
    std::uint32_t run = first_run_[d];
    for (const std::int64_t sign : {1, -1})
      for (const int s : stages_on_[d])
        runs.push_back({times_of(run++), sign * prog_.activation_bytes[s], sign});
    for (std::size_t k = 0; k < in_links_[d].size(); ++k)
      for (const std::int64_t sign : {1, -1}) runs.push_back({times_of(run++), sign * prog_.message_bytes});
  }

 private:
  // Run ids, device by device in collect's order: per stage held, its takes; per stage, its
  // releases; per link in, its arrivals and its consumers' starts.
  void number_runs() {
    const int p = prog_.devices;
    first_run_.resize(static_cast<std::size_t>(p) + 1, 0);
    for (int d = 0; d < p; ++d) {
      const std::size_t runs = 2 * stages_on_[d].size() + 2 * in_links_[d].size();
      first_run_[d + 1] = first_run_[d] + static_cast<std::uint32_t>(runs);
    }
    link_run_.assign(prog_.graph.resource_count(), kNoRun);
    std::map<std::pair<int, int>, std::uint32_t> link_between;
    for (int d = 0; d < p; ++d)
      for (std::size_t k = 0; k < in_links_[d].size(); ++k) {
        const auto arrive = first_run_[d] + static_cast<std::uint32_t>(2 * (stages_on_[d].size() + k));
        link_run_[in_links_[d][k]] = arrive;
        link_between[prog_.link_ends.at(in_links_[d][k])] = arrive;
      }
    const auto link_into = [&](const std::vector<int>& route, int s, int from) {
      if (from < 0 || from >= plan_.stages || route[from] == route[s]) return kNoRun;
      const auto it = link_between.find({route[from], route[s]});
      return it == link_between.end() ? kNoRun : it->second;
    };
    hold_runs_.resize(plan_.routes.size());
    for (std::size_t r = 0; r < plan_.routes.size(); ++r)
      for (int s = 0; s < plan_.stages; ++s) {
        const auto& route = plan_.routes[r];
        const auto& held = stages_on_[route[s]];
        const auto k = static_cast<std::uint32_t>(std::lower_bound(held.begin(), held.end(), s) - held.begin());
        const std::uint32_t take = first_run_[route[s]] + k;
        hold_runs_[r].push_back({take, take + static_cast<std::uint32_t>(held.size()), link_into(route, s, s - 1),
                                 link_into(route, s, s + 1)});
      }
  }

  // How many times each run holds, per route from its micro-batches: a stage's takes and
  // releases, the messages its ops consume and, as many, the sends that arrive on each link.
  void count_runs() {
    run_size_.assign(first_run_.back(), 0);
    std::vector<std::size_t> on_route(plan_.routes.size(), 0);
    for (const int r : plan_.route_of_micro) ++on_route[r];
    for (std::size_t r = 0; r < plan_.routes.size(); ++r)
      for (const HoldRuns& runs : hold_runs_[r]) {
        run_size_[runs.take] += on_route[r];
        run_size_[runs.release] += on_route[r];
        for (const std::uint32_t in : {runs.forward_in, runs.backward_in})
          if (in != kNoRun) {
            run_size_[in] += on_route[r];
            run_size_[in + 1] += on_route[r];
          }
      }
  }

  std::span<Time> times_of(std::uint32_t run) { return {times_.get() + run_begin_[run], run_size_[run]}; }

  // Gathers every run's times, in one pass over the ops.
  void gather() {
    const std::size_t runs = run_size_.size();
    fill_.assign(runs, 0);
    for (std::size_t k = 1; k < runs; ++k) fill_[k] = fill_[k - 1] + run_size_[k - 1];
    run_begin_ = fill_;
    times_ = std::make_unique_for_overwrite<Time[]>(runs == 0 ? 0 : fill_.back() + run_size_.back());
    const std::size_t end = std::min(prog_.graph.op_count(), prog_.info.size());  // a job appends ops of its own
    for (OpId op = 0; op < end; ++op) gather_op(op);
    for (std::size_t k = 0; k < runs; ++k)
      if (fill_[k] != run_begin_[k] + run_size_[k])
        throw std::logic_error("measure: a device's memory changes are fewer than the lowering's");
  }

  // One op's times into their runs: a forward's start takes its activations, the end of a
  // backward (W where split) frees them; a compute op's start consumes the messages its inputs
  // came in; a send's done time is the message's arrival.
  void gather_op(OpId op) {
    const PipeOp kind = prog_.info.kind(op);
    if (kind == PipeOp::Update || kind == PipeOp::Comm) return;
    const PipeOpInfo x = prog_.info[op];
    if (PipelineProgram::is_send(kind)) {
      if (prog_.message_bytes != 0) {
        const OpGraph& g = prog_.graph;
        put(link_run_[g.op_resource(op)], tl_.done(g, op));
      }
      return;
    }
    switch (kind) {
      case PipeOp::Forward: forward_half(op, x.stage, x.micro); break;
      case PipeOp::Backward: backward_half(op, x.stage, x.micro, true); break;
      case PipeOp::BackwardInput: backward_half(op, x.stage, x.micro, false); break;
      case PipeOp::BackwardWeight:
        put(hold_runs_[plan_.route_of_micro[x.micro]][x.stage].release, tl_.end(prog_.graph, op));
        break;
      case PipeOp::Overlap: {
        forward_half(op, x.stage, x.micro);
        const auto& a = prog_.activations[static_cast<std::size_t>(x.stage2()) * plan_.microbatches + x.micro2];
        backward_half(op, x.stage2(), x.micro2, a.until == op);  // a split pair's W frees them
        break;
      }
      default: break;
    }
  }
  void forward_half(OpId op, int s, int i) {
    const HoldRuns& runs = hold_runs_[plan_.route_of_micro[i]][s];
    put(runs.take, tl_.start[op]);
    if (runs.forward_in != kNoRun) put(runs.forward_in + 1, tl_.start[op]);
  }
  void backward_half(OpId op, int s, int i, bool frees) {
    const HoldRuns& runs = hold_runs_[plan_.route_of_micro[i]][s];
    if (frees) put(runs.release, tl_.end(prog_.graph, op));
    if (runs.backward_in != kNoRun) put(runs.backward_in + 1, tl_.start[op]);
  }
  void put(std::uint32_t run, Time t) {
    if (fill_[run] == run_begin_[run] + run_size_[run])
      throw std::logic_error("measure: a device's memory changes outnumber the lowering's");
    times_[fill_[run]++] = t;
  }

  static constexpr std::uint32_t kNoRun = ~std::uint32_t{0};

  const PipelinePlan& plan_;
  const PipelineProgram& prog_;
  const Timeline& tl_;
  std::vector<std::vector<int>> stages_on_;        // per device: the stages it holds on some route
  std::vector<std::vector<ResourceId>> in_links_;  // per device: the links into it (none without messages)
  std::vector<std::uint32_t> first_run_;           // per device (+1: end): its first run
  // A (route, stage)'s runs on its device: its takes and releases; the arrival runs of the links
  // its forward and its backward receive their inputs on (kNoRun: none; their consumers' run follows).
  struct HoldRuns {
    std::uint32_t take, release, forward_in, backward_in;
  };
  std::vector<std::vector<HoldRuns>> hold_runs_;  // [route][stage]: its device's runs for the stage
  std::vector<std::uint32_t> link_run_;           // per resource: a link's arrival run
  std::vector<std::size_t> run_size_;             // per run
  // Per run where its times start and where the next goes; the times.
  std::vector<std::size_t> run_begin_, fill_;
  std::unique_ptr<Time[]> times_;
};

}  // namespace

std::vector<LevelCurve> pipeline_memory(const PipelinePlan& plan, const PipelineProgram& program,
                                        const Timeline& timeline) {
  DeviceChanges changes(plan, program, timeline);
  std::vector<LevelRun> runs;
  std::vector<Time> scratch;
  std::vector<LevelCurve> curves;
  for (int d = 0; d < program.devices; ++d) {
    changes.collect(d, runs);
    curves.push_back(level_curve_of_runs(runs, scratch));
  }
  return curves;
}

PipelineStats measure(const PipelinePlan& plan, const PipelineProgram& program, const Timeline& timeline,
                      MemoryDetail detail) {
  const OpGraph& g = program.graph;
  PipelineStats st;
  st.step_time = timeline.makespan;
  st.forward_messages = program.forward_messages;
  st.backward_messages = program.backward_messages;
  const auto busy = resource_busy(g, timeline);
  const auto copies = plan.stage_copies_per_device();
  DeviceChanges changes(plan, program, timeline);
  std::vector<LevelRun> runs;
  std::vector<Time> scratch;
  double idle_sum = 0;
  for (int d = 0; d < program.devices; ++d) {
    changes.collect(d, runs);
    LevelPeaks peaks;
    if (detail == MemoryDetail::Curves) {
      st.memory.push_back(level_curve_of_runs(runs, scratch, &peaks.second));
      peaks.first = {st.memory.back().peak, st.memory.back().peak_time};
    } else {
      peaks = level_peaks_of_runs(runs, scratch);
    }
    const LevelPeak bytes = peaks.first;
    DeviceStats ds;
    ds.id = d;
    ds.busy = busy[program.compute[d]];
    ds.idle = st.step_time - ds.busy;
    ds.peak_memory = bytes.peak;
    ds.peak_memory_time = bytes.time;
    ds.peak_resident = static_cast<int>(peaks.second.peak);
    ds.stage_copies = copies[d];
    ds.parameter_copies = plan.stages > 0 ? static_cast<double>(copies[d]) * plan.devices / plan.stages : 0.0;
    idle_sum += st.step_time > 0 ? static_cast<double>(ds.idle) / static_cast<double>(st.step_time) : 0.0;
    st.devices.push_back(ds);
  }
  st.bubble_fraction = program.devices > 0 ? idle_sum / program.devices : 0.0;
  return st;
}

}  // namespace stepsim
