#pragma once
// The input of an `rl` section as plain values (RlSpec: owned here, read by cli/input), and the
// one call that simulates all of it: the loop (one run per variant), the shared card's switch
// orders, the weight distribution.
#include <optional>
#include <vector>

#include "schedules/lowering/rl/rl_loop_sim.hpp"
#include "schedules/lowering/rl/rl_weights_sim.hpp"

namespace stepsim {

struct RlSpec {
  std::vector<RlLoopSpec> loops;  // the base loop first, then its variants; may be empty
  std::optional<ColocateSpec> colocate;
  std::optional<WeightTransferSpec> weight_transfer;
};

struct RlRun {
  std::vector<RlLoopRun> loops;
  std::vector<ColocateRun> colocate;
  std::vector<TransferRun> weight_transfer;
};

// Throws SpecError (keys relative to the rl section), DeadlockError, GraphError.
RlRun simulate_rl(const RlSpec& spec);

}  // namespace stepsim
