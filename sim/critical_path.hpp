#pragma once
// The critical path of an executed Timeline: the chain of ops that set the makespan.
//
// Rule: the chain ends at the op whose done time (end + latency) is the makespan, the lowest op
// id on ties. Going backwards, each op's predecessor is what it was waiting for when it started:
//  1. a dependency done exactly at its start (the lowest op id if several), else
//  2. the op that held its resource until then, if that one ended exactly at its start: on a
//     program-order resource the op before it in program order; on a FIFO link the op served
//     before it that started earlier (zero-length ops served at the same instant hold nothing).
// The chain stops at an op with neither, which started at time 0: an op that waited for neither
// its inputs nor its resource started when the run did.
// Every op on the chain is in the timeline; the ops are returned in time order, first to last.
#include <cstdint>
#include <vector>

#include "sim/timeline.hpp"

namespace stepsim {

struct CriticalStep {
  OpId op;
  enum class Why : std::uint8_t { Start, Dependency, Resource } why;  // what the op waited for
};

// The chain as described above. Empty for a graph without ops. Needs a finalized graph and the
// timeline the engine returned for it.
std::vector<CriticalStep> critical_path(const OpGraph& graph, const Timeline& timeline);

}  // namespace stepsim
