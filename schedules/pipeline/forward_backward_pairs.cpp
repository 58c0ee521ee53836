#include "schedules/pipeline/forward_backward_pairs.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace stepsim {

namespace {
bool is_backward(const Action& a) { return a.kind == ActionKind::Backward || a.kind == ActionKind::BackwardInput; }
}  // namespace

PipelinePlan pair_forward_backward(PipelinePlan plan) {
  for (std::size_t d = 0; d < plan.actions.size(); ++d) {
    const std::vector<Action>& in = plan.actions[d];
    const bool exchanges = d < plan.paired_with_next.size() && !plan.paired_with_next[d].empty();
    std::vector<Action> out;
    std::vector<bool> paired;
    out.reserve(in.size());
    auto emit = [&](const Action& a, std::size_t from) {
      out.push_back(a);
      if (exchanges) paired.push_back(plan.paired_with_next[d][from]);
    };
    std::optional<std::size_t> held;  // a backward waiting for the next forward to pair with
    for (std::size_t i = 0; i < in.size(); ++i) {
      const Action& a = in[i];
      if (held && a.kind == ActionKind::Forward) {  // the pair: this forward and the backward before it
        const Action& b = in[*held];
        emit(Action(ActionKind::OverlapFB, a.stage, a.micro, b.stage, b.micro, b.kind), i);
        held.reset();
        if (i + 1 < in.size() && is_backward(in[i + 1])) held = ++i;  // the next backward waits for the next forward
        continue;
      }
      if (held) {  // no forward follows (the cool-down): the held backward runs alone
        emit(in[*held], *held);
        held.reset();
      }
      if (a.kind == ActionKind::Forward && i + 1 < in.size() && is_backward(in[i + 1])) {
        emit(a, i);  // the steady state's first forward runs alone: one more warm-up forward
        held = ++i;
        continue;
      }
      emit(a, i);
    }
    if (held) emit(in[*held], *held);
    plan.actions[d] = std::move(out);
    if (exchanges) plan.paired_with_next[d] = std::move(paired);
  }
  return plan;
}

}  // namespace stepsim
