#pragma once
// Levels from changes that come as a few runs, each (nearly always) already in time order: a
// model that knows its holds can list them that way (a device's forwards start in order, a FIFO
// link's messages arrive in order) and spare the sort.
#include <span>
#include <vector>

#include "sim/level.hpp"

namespace stepsim {

// Changes that all move a level by the same `delta` (a device's forwards, each taking one stage's
// activations), and a second level by `delta2` (level_peaks_of_runs: the micro-batches the same
// forwards make resident). The times are sorted in place where they are not in order.
struct LevelRun {
  std::span<Time> times;
  std::int64_t delta;
  std::int64_t delta2 = 0;
};

// A level's peak and the first time it is reached.
struct LevelPeak {
  std::int64_t peak = 0;
  Time time = 0;
};

// As level_curve (sim/level.hpp) of every run's changes by `delta`: each run out of order is
// sorted on its own (through `scratch`, a buffer a caller reuses); runs with the same times are
// read as one (a forward's start both takes its activations and consumes its input message); up
// to 16 runs are then read side by side (no copy, no mispredicted merge branch: a fifth less time
// for a pipeline's measure pass), more are merged pairwise first. The same curve as level_curve
// of the same changes (empty where every delta is 0). Where `second` is given, it is set to the
// peak of the level the runs move by `delta2`, read in the same sweep.
LevelCurve level_curve_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch,
                               LevelPeak* second = nullptr);

// The peaks of the same curve (LevelCurve::peak, ::peak_time) and of the level the runs move by
// `delta2`, each with the first time it is reached, in one sweep and without building the curves'
// steps: for figures that need only the peaks (a device's peak memory and resident micro-batches).
struct LevelPeaks {
  LevelPeak first, second;
};
LevelPeaks level_peaks_of_runs(std::span<const LevelRun> runs, std::vector<Time>& scratch);

}  // namespace stepsim
