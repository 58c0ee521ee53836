#include "schedules/pipeline/dualpipe_phases.hpp"

#include <deque>
#include <utility>

namespace stepsim {

std::vector<DualPipeOp> dualpipe_rank_program(int P, int h, int C, bool middle) {
  using K = DualPipeOp::Kind;
  std::vector<DualPipeOp> ops;
  int next_forward[2] = {0, 0}, next_backward[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_weights;  // split backwards awaiting W, oldest first

  const auto forward = [&](int ph) { ops.push_back({K::Forward, ph, next_forward[ph]++}); };
  const auto backward = [&](int ph, bool split) {
    const int idx = next_backward[ph]++;
    if (split) {
      ops.push_back({K::BackwardInput, ph, idx});
      pending_weights.emplace_back(ph, idx);
    } else {
      ops.push_back({K::Backward, ph, idx});
    }
  };
  const auto weight = [&] {
    const auto [ph, idx] = pending_weights.front();
    pending_weights.pop_front();
    ops.push_back({K::BackwardWeight, ph, idx});
  };
  const auto overlapped = [&](int f_phase, int b_phase) {
    ops.push_back({K::Overlap, f_phase, next_forward[f_phase]++, b_phase, next_backward[b_phase]++});
  };

  for (int i = 0; i < 2 * (P - h - 1); ++i) forward(0);  // 1
  for (int i = 0; i < h + 1; ++i) {                      // 2
    forward(0);
    forward(1);
  }
  for (int i = 0; i < P - h - 1; ++i) {  // 3
    backward(1, true);
    weight();
    forward(1);
  }
  for (int i = 0; i < C - 2 * P + h + 1; ++i) {  // 4
    if (i == 0 && middle) {
      // dualpipe.py: "We don't overlap these two chunks to further reduce bubble size."
      forward(0);
      backward(1, false);
    } else {
      overlapped(0, 1);
    }
    overlapped(1, 0);
  }
  for (int i = 0; i < P - h - 1; ++i) {  // 5
    backward(1, false);
    overlapped(1, 0);
  }
  bool split = false;  // 6: the second half of these backwards is split
  for (int i = 0; i < h + 1; ++i) {
    if (i == (h + 1) / 2 && h % 2 == 1) split = true;
    backward(1, split);
    if (i == (h + 1) / 2 && h % 2 == 0) split = true;
    backward(0, split);
  }
  for (int i = 0; i < P - h - 1; ++i) {  // 7
    weight();
    backward(0, true);
  }
  for (int i = 0; i < h + 1; ++i) weight();  // 8
  return ops;
}

std::vector<Action> dualpipe_rank_actions(int P, int h, int C, bool middle, const std::function<int(int)>& stage,
                                          const std::function<int(int, int)>& micro) {
  std::vector<Action> actions;
  for (const DualPipeOp& op : dualpipe_rank_program(P, h, C, middle)) {
    Action a{ActionKind::Forward, stage(op.phase), micro(op.phase, op.index)};
    switch (op.kind) {
      case DualPipeOp::Kind::Forward: break;
      case DualPipeOp::Kind::Backward: a.kind = ActionKind::Backward; break;
      case DualPipeOp::Kind::BackwardInput: a.kind = ActionKind::BackwardInput; break;
      case DualPipeOp::Kind::BackwardWeight: a.kind = ActionKind::BackwardWeight; break;
      case DualPipeOp::Kind::Overlap:
        a = Action{ActionKind::OverlapFB, a.stage, a.micro, stage(op.phase2), micro(op.phase2, op.index2)};
        break;
    }
    actions.push_back(a);
  }
  return actions;
}

}  // namespace stepsim
