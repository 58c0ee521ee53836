#include "schedules/lowering/job/job_step_parts.hpp"

#include <algorithm>

#include "sim/critical_path.hpp"
#include "sim/engine.hpp"

namespace stepsim {

// A job step: its parts in order (job_step_parts.hpp), then what the run gives: step time,
// throughput, MFU / HFU, bubble, memory by pipeline rank and one layer's passes.
const char* job_op_kind_name(JobOpKind k) {
  switch (k) {
    case JobOpKind::Forward: return "forward";
    case JobOpKind::Backward: return "backward";
    case JobOpKind::BackwardWeight: return "weight gradient";
    case JobOpKind::InPassComm: return "TP/CP/EP collectives";
    case JobOpKind::PpSend: return "PP sends";
    case JobOpKind::DpComm: return "DP/ZeRO collectives";
    case JobOpKind::Optimizer: return "optimizer";
    case JobOpKind::Input: return "input wait";
    case JobOpKind::Other: return "other";
  }
  return "?";
}

namespace {

// MFU's peak: the one the layers' GEMMs run at (FP8's, FP4's under nvfp4, else BF16's).
double mfu_peak(const JobLayout& l, const AcceleratorSpec& a) {
  const double low = l.fp8 ? a.low_precision_peak(l.fp8_recipe) : 0;
  return low > 0 ? low : a.peak_bf16;
}

// One layer's passes on one GPU for one micro-batch, as the result reports them: the model's layer
// (a hybrid's softmax one, a hybrid pattern's mean), each kind of a hybrid's, the host waits (a
// pattern's MoE layer's), the MoE block alone, and the softmax attention layer's tiles.
void layer_figures(const JobModel& m, const JobLayout& l, const ClusterSpec& c, JobStepResult& r) {
  const auto pass_seconds = [](const LayerPasses& p, double& forward, double& backward) {
    forward = p.forward.compute() + p.forward.comm();
    backward = p.backward_input.compute() + p.backward_input.comm() + p.backward_weight.compute();
  };
  const auto host_seconds = [](const LayerPasses& p) { return p.forward.host + p.backward_input.host; };
  // The parts pass_seconds sums: the weight gradients' compute, not their collectives.
  const auto add_parts = [&](const LayerPasses& p, double share) {
    PassSeconds weight = p.backward_weight;
    weight.tp = weight.cp = weight.ep = 0;
    r.layer_forward += p.forward * share;
    r.layer_backward += (p.backward_input + weight) * share;
  };
  const auto add_kind = [&](const char* what, const JobModel& kind) {
    JobStepResult::KindLayer k{what};
    const LayerPasses p = layer_passes(kind, l, c);
    pass_seconds(p, k.forward_s, k.backward_s);
    r.kind_layers.push_back(k);
    return p;
  };
  if (!m.hybrid_pattern.empty()) {
    // The pattern's kinds, each a layer of one block: the model itself is none of them.
    for (const auto& [symbol, what] : hybrid_pattern_blocks()) {
      const int n = pattern_layers_in(m, symbol, 0, m.shape.layers);
      if (n == 0) continue;
      const JobModel kind = layer_kind_model(m, layer_kind(m, static_cast<int>(m.hybrid_pattern.find(symbol))));
      const LayerPasses p = add_kind(what, kind);
      r.layer_forward_s += n * r.kind_layers.back().forward_s / m.shape.layers;
      r.layer_backward_s += n * r.kind_layers.back().backward_s / m.shape.layers;
      add_parts(p, static_cast<double>(n) / m.shape.layers);
      r.layer_host_s = std::max(r.layer_host_s, host_seconds(p));
      if (const LayerWork w = layer_work(kind, l); w.attention_tiles.keys_per_query > 0)
        r.attention_tiles = w.attention_tiles;
    }
  } else {
    r.attention_tiles = layer_work(m, l).attention_tiles;
    const LayerPasses lp = layer_passes(m, l, c);
    pass_seconds(lp, r.layer_forward_s, r.layer_backward_s);
    add_parts(lp, 1.0);
    r.layer_host_s = host_seconds(lp);
    if (!m.every_layer_linear() && linear_layers_in(m, 0, m.shape.layers) > 0) {
      add_kind("softmax", m);
      add_kind("Gated DeltaNet", linear_layer_model(m));
    }
  }
  pass_seconds(moe_block_passes(m, l, c), r.moe_block_forward_s, r.moe_block_backward_s);
}

JobStepRun run_once(const JobStepSpec& spec) {
  JobStepRun run;
  run.spec = spec;
  const JobLayout& l = spec.layout;
  const ClusterSpec& c = spec.cluster;
  run.comm = plan_job_comm(spec);
  const bool fsdp = l.zero >= 3;
  if (!fsdp) {
    run.plan = job_pipeline_plan(l);
    check_placement(run.plan, run.comm);
    run_pipeline_path(run);
  } else {
    run_fsdp_path(run);
  }
  const OpGraph& g = run.graph();
  const Timeline& t = run.timeline;
  JobStepResult& r = run.result;
  // The FSDP path's optimizer follows the graph's end (see run_fsdp_path).
  const Time tail = fsdp ? run.comm.optimizer[0] : 0;
  r.step_time = t.makespan + tail;
  r.gpus = l.ranks();
  r.simulated_devices = fsdp ? 1 : l.pp;
  r.ops = static_cast<std::int64_t>(g.op_count());
  r.microbatches = l.microbatches();
  const double step_s = to_s(r.step_time);
  const StepFlops fl = step_flops(spec.model, l);
  const double peak = mfu_peak(l, c.accelerator);
  r.tokens_per_s_per_gpu =
      static_cast<double>(l.global_batch) * static_cast<double>(spec.model.seq) / step_s / static_cast<double>(r.gpus);
  r.model_tflops_per_gpu = fl.model / step_s / static_cast<double>(r.gpus) / 1e12;
  r.hardware_tflops_per_gpu = fl.hardware / step_s / static_cast<double>(r.gpus) / 1e12;
  r.mfu = r.model_tflops_per_gpu * 1e12 / peak;
  r.hfu = r.hardware_tflops_per_gpu * 1e12 / peak;

  // Bubble: the share of the step in which neither a device's compute stream nor its in-pass
  // collectives work (an overlapped pair runs the two at once).
  const auto busy = resource_busy(g, t);
  double idle = 0;
  if (!fsdp) {
    const PipelineProgram& prog = *run.pipeline;
    Time busiest = -1;
    for (int d = 0; d < prog.devices; ++d) {
      const auto k = static_cast<std::size_t>(d);
      const Time b = prog.comm.empty() ? busy[prog.compute[k]]
                                       : busy_union(resource_intervals(g, t, prog.compute[k]),
                                                    resource_intervals(g, t, prog.comm[k]));
      idle += 1.0 - static_cast<double>(b) / static_cast<double>(r.step_time);
      if (b > busiest) {  // the lowest rank on ties
        busiest = b;
        r.busiest_rank = d;
      }
    }
    r.bubble = idle / prog.devices;
    r.stage_imbalance =
        std::max(0.0, r.bubble - (1.0 - static_cast<double>(busiest) / static_cast<double>(r.step_time)));
  } else {
    r.bubble = 1.0 - static_cast<double>(busy[run.fsdp->compute[0]] + tail) / static_cast<double>(r.step_time);
  }

  critical_shares(run, fsdp, tail);

  // Memory: activations at the pipeline's simulated peak (messages included) on the worst device.
  std::vector<Bytes> act_peaks;
  if (!fsdp) {
    const PipelineStats st = measure(run.plan, *run.pipeline, t);
    for (const auto& d : st.devices) act_peaks.push_back(d.peak_memory);
  }
  r.memory_by_rank = job_memory_by_rank(spec.model, l, run.comm.chunks, act_peaks);
  r.memory = most_loaded(r.memory_by_rank);
  r.capacity = c.accelerator.usable_memory;
  layer_figures(spec.model, l, c, r);
  return run;
}

}  // namespace

JobStepRun run_job_step(const JobStepSpec& spec) {
  JobStepRun run = run_once(spec);
  // recompute_layers: auto was counted by the analytic memory, a lower bound: while the simulated
  // peak is over, one layer more of each chunk, up to every layer.
  if (spec.layout.fewest_recompute) {
    JobStepSpec s = spec;
    const int most = most_chunk_layers(s.model, s.layout);
    while (run.result.memory.total() > run.result.capacity && s.layout.partial_recompute()) {
      const int n = s.layout.recompute_layers + 1;
      s.layout.recompute_layers = n >= most ? -1 : n;
      run = run_once(s);
    }
  }
  // offload_activations: auto likewise: one layer more on the host while the simulated peak is over.
  if (spec.layout.fewest_offloaded) {
    JobStepSpec s = spec;
    while (run.result.memory.total() > run.result.capacity && s.layout.offload_activations + 1 < s.model.shape.layers) {
      ++s.layout.offload_activations;
      run = run_once(s);
    }
  }
  return run;
}

}  // namespace stepsim
