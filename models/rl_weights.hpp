#pragma once
// Where RL weights live and how they move (reference section 6 / book 10.5, figures 10-37/38):
//  * a shared accelerator that takes turns training and generating, whose memory peak depends
//    on the order in which the switch loads and releases states;
//  * distributing new weights to expert-parallel receivers: the full set to each, or to each
//    only its shard.
// Plain values and the closed forms; the engine versions are in schedules/rl_weights_sim.hpp.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

// A block of accelerator memory the switch moves. Copied states take size / bandwidth to load
// or offload; `allocated` ones (a KV pool) are created and dropped in place, in no time.
struct CardState {
  std::string name;
  Bytes size = 0;
  bool allocated = false;
};

struct SwitchStep {
  std::string state;
  bool load = true;  // "+name" loads or allocates, "-name" offloads or frees
};

struct SwitchOrder {
  std::string name;
  std::vector<SwitchStep> steps;
};

// Training, then the switch, then generation, on one card. A state no step loads is resident
// from the start; a state no step releases stays to the end.
struct ColocateSpec {
  Bytes capacity = 0;
  std::int64_t bandwidth = 0;  // bytes/s for loading and offloading copied states
  std::vector<CardState> states;
  Time training = 0, generation = 0;  // the phases before and after the switch
  std::vector<SwitchOrder> orders;
};

const CardState* find_state(const ColocateSpec& spec, const std::string& name);
// Memory held while training, before the switch.
Bytes resident_before(const ColocateSpec& spec, const SwitchOrder& order);
// The peak of the switch, walking its steps: each load adds its state, each release removes it.
Bytes switch_peak(const ColocateSpec& spec, const SwitchOrder& order);

enum class WeightDistribution : std::uint8_t { FullSet, ByShard };
const char* distribution_name(WeightDistribution d);

// New weights of `size` bytes go from `senders` (each holding an even, contiguous share) to
// `receivers` expert-parallel ranks (receiver r owns the r-th even share, its shard).
struct WeightTransferSpec {
  Bytes size = 0;
  int receivers = 1;
  int senders = 1;
  std::int64_t bandwidth = 0;  // each sender's outgoing link, bytes/s
  Time latency = 0;            // per transfer
};

// [begin, end) of a's share k of `size` cut into n even parts.
Bytes share_begin(Bytes size, std::int64_t n, std::int64_t k);
// Bytes on the wire in all: receivers x size for the full set, size by shard.
Bytes total_traffic(const WeightTransferSpec& spec, WeightDistribution d);

}  // namespace stepsim
