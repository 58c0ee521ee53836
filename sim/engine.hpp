#pragma once
// The discrete-event engine: runs an OpGraph on its resources and returns the Timeline.
//
// Rules (stated once, relied on everywhere):
//  * An op is ready when every dependency is done (ended plus its latency).
//  * A program-order resource starts its next op in program order as soon as the op is ready
//    and the resource is free; a FIFO resource starts the ready op with the earliest ready
//    time, ties broken by lower op id.
//  * All events at one time (ends, arrivals) are applied before any resource is offered new work;
//    then the resources freed or fed at that time are offered work in resource-id order. What
//    the events do commutes (counts decremented, flags cleared, FIFO entries keyed by (ready
//    time, op id)), so their order within a time does not matter. A run is a pure function of
//    the graph: same graph, same timeline, byte for byte.
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/timeline.hpp"

namespace stepsim {

// A run that cannot finish: some program-order resource waits on an op that can never be done.
class DeadlockError : public std::runtime_error {
 public:
  struct Stuck {
    ResourceId resource;
    OpId op;                  // the op the resource would run next
    std::vector<OpId> waits;  // its dependencies that never finished
  };
  DeadlockError(std::string what, std::vector<Stuck> stuck)
      : std::runtime_error(std::move(what)), stuck_(std::move(stuck)) {}
  const std::vector<Stuck>& stuck() const { return stuck_; }

 private:
  std::vector<Stuck> stuck_;
};

// Runs the graph (finalizing it if needed). Throws GraphError naming a dependency cycle,
// DeadlockError if not every op can run for another reason, TimeOverflowError if a time would
// pass the limit (sim/time.hpp).
Timeline run(OpGraph& graph);

}  // namespace stepsim
