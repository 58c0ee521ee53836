#include "models/step_timing.hpp"

namespace stepsim {

Bytes zero3_step_volume(Bytes weight_bytes, int cards, int microbatches_per_card) {
  if (cards <= 1) return 0;
  const __int128 v = static_cast<__int128>(3) * microbatches_per_card * (cards - 1) * weight_bytes / cards;
  return static_cast<Bytes>(v);
}

StepCommSource given_step_comm(Time exposed, Bytes weight_bytes, std::int64_t link_bandwidth) {
  return [=](const StepShape& s) {
    StepComm c;
    c.exposed = exposed;
    c.link = transfer_time(zero3_step_volume(weight_bytes, s.cards, s.microbatches_per_card), link_bandwidth);
    c.source = "given exposed wait; link time from V = 3m(d-1)/d x 2N";
    return c;
  };
}

}  // namespace stepsim
