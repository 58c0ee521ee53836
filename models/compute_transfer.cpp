#include "models/compute_transfer.hpp"

#include <stdexcept>
#include <vector>

#include "sim/engine.hpp"

namespace stepsim {

ComputeTransferResult simulate_compute_transfer(const ComputeTransferSpec& spec) {
  if (spec.bandwidth <= 0) throw std::invalid_argument("bandwidth must be positive");
  if (spec.iterations < 1 || spec.iterations > 1'000'000)
    throw std::invalid_argument("iterations must be 1 to 1,000,000");
  ComputeTransferResult r;
  r.transfer = transfer_time(spec.bytes, spec.bandwidth);
  OpGraph g;
  const ResourceId compute = g.add_resource("compute"), link = g.add_resource("link");
  std::vector<OpId> sends;
  OpId previous_send = kNoOp;
  for (int i = 0; i < spec.iterations; ++i) {
    const OpId c = g.add_op(compute, spec.compute);
    if (!spec.overlap && previous_send != kNoOp) g.add_dep(previous_send, c);
    const OpId s = g.add_op(link, r.transfer);
    g.add_dep(c, s);
    sends.push_back(previous_send = s);
  }
  const Timeline t = run(g);
  r.makespan = t.makespan;
  r.period = sends.size() > 1 ? t.done(g, sends.back()) - t.done(g, sends[sends.size() - 2]) : t.makespan;
  return r;
}

}  // namespace stepsim
