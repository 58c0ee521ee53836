#pragma once
// The seam between the planner and the data-parallel step simulation.
//
// The planner computes each card's compute from FLOPs; how long the step's communication takes
// and how much of it the compute does not hide comes from a StepCommSource. A scenario with a
// `data_parallel` section gets the simulated ZeRO-3 step (`data_parallel_step_comm`, chosen by
// `plan_step_comm` in cli/input/plan_source.hpp); without one, or with `exposed_comm` given,
// `given_step_comm` supplies the given exposed wait (the book's 0.08 s) and the link time from
// the design desk's closed form
//     V = 3 m (d - 1) / d x 2N bytes per card per step
// (per micro-batch: AllGather of the BF16 weights before forward and again before backward, and a
// ReduceScatter of the BF16 gradients; section 10.3.3) over the card's link bandwidth.
#include <cstdint>
#include <functional>
#include <string>

#include "sim/time.hpp"

namespace stepsim {

// What the planner asks of a step: the data-parallel group and each card's work.
struct StepShape {
  int cards = 1;
  int microbatches_per_card = 1;
  Time compute_per_microbatch = 0;
  double efficiency = 0;  // the fraction of peak the compute assumes (a simulation recomputes it)
  Time input_wait = 0;    // per step, before the first gather can start
};

struct StepComm {
  Time link = 0;       // time the card's link is busy per step
  Time exposed = 0;    // the part of it the step waits for (not hidden behind compute)
  std::string source;  // where the figures come from, shown in reports
};

using StepCommSource = std::function<StepComm(const StepShape&)>;

// Bytes each card sends and receives per step under ZeRO-3: 3 m (d - 1) / d x weight_bytes.
Bytes zero3_step_volume(Bytes weight_bytes, int cards, int microbatches_per_card);

// The stand-in source: exposed wait as given; link time from zero3_step_volume over
// `link_bandwidth` bytes/s (0: no link figure).
StepCommSource given_step_comm(Time exposed, Bytes weight_bytes, std::int64_t link_bandwidth);

}  // namespace stepsim
