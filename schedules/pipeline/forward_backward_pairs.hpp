#pragma once
// A 1F1B plan's steady state as overlapped forward-backward pairs: each forward that a device runs
// just before a backward becomes one action with it, as Megatron-Core's combined 1F1B runs them
// when it overlaps the expert all-to-alls of one micro-batch with another's compute
// (--overlap-moe-expert-parallel-comm; its docs: "MoE A2A overlap"). The warm-up forwards and the
// cool-down backwards stay alone. The lowering runs a pair as DualPipe's (each half's in-pass
// collectives beside the other half's compute).
#include "schedules/pipeline/action.hpp"

namespace stepsim {

// `plan` with each device's steady state paired: where the list runs a forward and then a
// backward (F_a B_x F_b B_y ... F_z B_w B ...), the forward runs alone, one more warm-up
// forward, and each backward pairs with the forward after it (F_a, F_b+B_x, ..., F_z+B_v, B_w):
// the two halves of a pair never belong to one micro-batch, and as every device takes one more
// warm-up forward, no pair waits on another that waits on it (Megatron-Core's combined 1F1B adds
// the same warm-up micro-batch). The plan stays complete (check_plan); paired_with_next keeps the
// forward's entry for a pair.
PipelinePlan pair_forward_backward(PipelinePlan plan);

}  // namespace stepsim
