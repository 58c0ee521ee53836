#include "schedules/lowering/job/job_step_parts.hpp"

#include <algorithm>

#include "sim/checked.hpp"

namespace stepsim {

// Part 2 (job_step.hpp): per chunk its compute and in-pass collectives in integer ns, the PP
// message and the link it crosses, per device its DP / ZeRO collectives and its optimizer step.
JobCommPlan plan_job_comm(const JobStepSpec& spec) {
  const JobLayout& l = spec.layout;
  const ClusterSpec& c = spec.cluster;
  JobCommPlan plan;
  plan.paths = group_paths(c, l);
  plan.chunks = chunk_costs(spec.model, l, c);
  for (const auto& ch : plan.chunks) {
    StageCost s;
    s.forward = phase_ns(ch.forward.compute());
    // A full backward's input gradient has its weight gradient beside it; a split one's does not.
    const PassSeconds split = ch.backward_input + ch.deferred_weight_grad;
    s.backward_input = phase_ns(split.compute());
    s.backward_weight = phase_ns(ch.backward_weight.compute());
    s.backward = time_add(phase_ns(ch.backward_input.compute()), s.backward_weight, "a backward (input + weight)");
    s.forward_comm = phase_ns(ch.forward.comm());
    s.backward_comm = phase_ns(ch.backward_input.comm());
    s.backward_input_comm = phase_ns(split.comm());
    // The stream's waits: on the host's MoE work and on activations' copies.
    s.forward_host = phase_ns(ch.forward.host + ch.forward.offload);
    s.backward_host = phase_ns(ch.backward_input.host + ch.backward_input.offload);
    s.activation = ch.activation;
    plan.stages.push_back(s);
  }
  // PP message: the boundary activation b s h, split over TP ranks (SC21 sec. 4.1 scatter/gather).
  plan.pp_message = bytes_from(static_cast<double>(l.micro_batch) * static_cast<double>(spec.model.seq) / l.cp *
                                   static_cast<double>(spec.model.shape.hidden) * 2 / l.tp,
                               "a pipeline message");
  plan.pp_inter_node = plan.paths.pp.inter_node;
  plan.pp_latency = plan.paths.pp.step_latency;
  plan.pp_message_time = transfer_time(plan.pp_message, static_cast<std::int64_t>(plan.paths.pp.bytes_per_second));
  // DP: members are the dp x cp ranks holding the same weights (CP ranks reduce gradients too),
  // and with DualPipe both devices of a pipeline that hold a stage; an expert's weights are on
  // ep times fewer (HeldParameters).
  plan.dp_inter_node = plan.paths.dp.inter_node;
  plan.device_chunks = device_chunks(l);
  for (int d = 0; d < l.pp; ++d) {
    std::vector<Time> red;
    Time gather = 0;
    const auto& held = plan.device_chunks[static_cast<std::size_t>(d)];
    // Holding the first chunk and the last (DualPipe's device 0), the last one's embedding copy is
    // the first one's tensor: its gradient is reduced (and its weights gathered) once, with it.
    const int last = static_cast<int>(plan.chunks.size()) - 1;
    const bool both_ends =
        last > 0 && std::count(held.begin(), held.end(), 0) && std::count(held.begin(), held.end(), last);
    for (int k : held) {
      HeldParameters p = held_parameters(plan.chunks[static_cast<std::size_t>(k)]);
      if (both_ends && k == last) p.dense -= plan.chunks[static_cast<std::size_t>(k)].embedding_copy;
      if (l.zero == 0) {
        red.push_back(phase_ns(replica_collective_seconds(Collective::AllReduce, p, l.grad_bytes, l, plan.paths)));
      } else {
        red.push_back(phase_ns(replica_collective_seconds(Collective::ReduceScatter, p, l.grad_bytes, l, plan.paths)));
        const double bytes = gathered_bytes_per_parameter(l, plan.chunks[static_cast<std::size_t>(k)]);
        gather += phase_ns(replica_collective_seconds(Collective::AllGather, p, bytes, l, plan.paths));
      }
    }
    plan.dp_reduce.push_back(red);
    plan.dp_gather.push_back(gather);
    plan.optimizer.push_back(phase_ns(optimizer_seconds(l, c, held_parameters(held, plan.chunks))));
  }
  return plan;
}

}  // namespace stepsim
