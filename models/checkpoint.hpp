#pragma once
// Checkpoint interval and the time lost to saving, redoing and restoring (section 10.4.4).
//
// First-order model (Young 1974, "A first order approximation to the optimum checkpoint
// interval"; Daly 2006, "A higher order estimate of the optimum checkpoint interval", eq. 1):
// with a save taking c, a restore r, an interval tau between saves and a mean time M between
// interruptions of the job, the fraction of extra time is
//     L(tau) = c / tau + (tau / 2 + r) / M
// (every tau seconds one save; every M seconds on average half an interval is redone and one
// restore is paid). M = per-card MTBF / cards; a job-wide loss-spike rollback every R adds 1/R to
// the interruption rate. dL/dtau = 0 gives Young's optimum tau* = sqrt(2 c M).
#include <optional>

#include "sim/time.hpp"

namespace stepsim {

struct Interruptions {
  Time card_mtbf = 0;  // mean time between failures of one card
  int cards = 1;
  std::optional<Time> rollback_every;  // loss-spike rollbacks of the whole job (section 10.4.5)

  // Interruptions per second of the whole job.
  double rate() const;
  // M: mean time between interruptions of the job.
  Time mean_time_between() const;
};

struct CheckpointCost {
  Time save = 0;     // c: the pause to write a checkpoint
  Time restore = 0;  // r: restart and load after an interruption
};

struct CheckpointOverhead {
  double save = 0;  // c / tau
  double redo = 0;  // (tau / 2 + r) / M
  double total() const { return save + redo; }
};

CheckpointOverhead checkpoint_overhead(const CheckpointCost& cost, Time interval, const Interruptions& job);

// Young's optimum interval sqrt(2 c M).
Time optimal_checkpoint_interval(const CheckpointCost& cost, const Interruptions& job);

// Bytes per second the storage must take on average to keep up with a checkpoint of `bytes`
// every `interval` (section 10.4.3: if the production rate exceeds what the storage sustains,
// pending snapshots pile up). The design case: ~115 GB every 1,800 s is ~64 MB/s.
double checkpoint_write_rate(Bytes bytes, Time interval);

}  // namespace stepsim
