#pragma once
// The weight studies of models/rl_weights.hpp on the engine.
//
// Shared card: one program-order resource runs `training`, then the switch steps of an order,
// then `generation`. Each state is a level hold on the card's memory counter: from the start of
// the step that loads it (or of training) until the end of the step that releases it (or of
// generation). Offloading takes size / bandwidth, so the old state is still counted while the
// next step waits; releases before acquisitions at equal times (sim/level.hpp).
//
// Weight distribution: each sender's outgoing link is a FIFO resource; sender s sends receiver r
// the bytes of its share that r needs (all of them for the full set, the overlap with r's shard
// otherwise), one op per (s, r) in receiver order, taking bytes / bandwidth plus the latency.
// Receivers' incoming links are not modelled (assumed faster than the senders' links).
#include <string>
#include <vector>

#include "models/rl_weights.hpp"
#include "schedules/lowering/spec_error.hpp"
#include "sim/engine.hpp"
#include "sim/level.hpp"

namespace stepsim {

struct ColocateRun {
  std::string order;
  OpGraph graph;
  std::vector<std::string> step;  // per op: "training", "+weights", "-training", "generation"
  Timeline timeline;
  LevelCurve memory;
  Bytes before = 0, after = 0;  // levels while training and while generating
  Bytes peak = 0;
  Time peak_time = 0;
  std::string peak_step;  // the op running when the peak is reached
  bool fits = true;       // peak <= capacity
};

// Throws SpecError with keys relative to the colocate section ("orders.load-first").
void check_colocate(const ColocateSpec& spec);
std::vector<ColocateRun> simulate_colocate(const ColocateSpec& spec);  // one run per order

struct TransferRun {
  struct Send {
    int sender, receiver;
    Bytes bytes;
    OpId op;
  };
  WeightDistribution mode;
  OpGraph graph;
  std::vector<ResourceId> links;  // per sender
  std::vector<Send> sends;        // indexed like the ops
  Timeline timeline;
  Bytes total = 0;              // bytes on all links
  std::vector<Bytes> received;  // per receiver
  Time time = 0;                // until the last byte arrives
};

void check_weight_transfer(const WeightTransferSpec& spec);  // SpecError keys relative to its section
std::vector<TransferRun> simulate_weight_transfer(const WeightTransferSpec& spec);  // full set, by shard

}  // namespace stepsim
