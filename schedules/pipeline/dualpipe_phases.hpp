#pragma once
// The per-rank program of DeepSeek's DualPipe (DeepSeek-V3 technical report, sec. 3.2.1 and
// fig. 5; reference implementation deepseek-ai/DualPipe, dualpipe.py, DualPipe.step), written
// over two abstract "phases" so that DualPipe and its V-shaped variant share it.
//
// A rank runs two model pieces. Phase 0 is the piece where the rank is early in its pipeline,
// phase 1 the piece where it is late. Ops are numbered per phase in the order the rank meets
// them (the k-th forward of phase 0 is that phase's k-th micro-batch); a family maps
// (phase, index) to (stage, micro-batch).
//
// The eight phases, with P ranks on each half-pipeline, h the rank's position in it
// (0 = the pipeline's end, P-1 = the middle) and C micro-batches per phase:
//   1  2(P-h-1) x F0                         warm-up of the early piece
//   2  (h+1) x (F0, F1)                      both pieces' forwards
//   3  (P-h-1) x (I1, W1, F1)                zero-bubble: late piece's backward split
//   4  (C-2P+h+1) x (F0&B1, F1&B0)           steady state: overlapped forward + full backward;
//                                            the middle ranks run their first F0, B1 apart
//   5  (P-h-1) x (B1, F1&B0)
//   6  (h+1) x (B1, B0)                      from the middle of this phase on, backwards are
//                                            split (I) and their W's deferred
//   7  (P-h-1) x (W, I0)
//   8  (h+1) x W                              W's run oldest first
#include <functional>
#include <vector>

#include "schedules/pipeline/action.hpp"

namespace stepsim {

struct DualPipeOp {
  enum class Kind { Forward, Backward, BackwardInput, BackwardWeight, Overlap } kind;
  int phase;
  int index;
  // Overlap: the backward half (always a full backward in DualPipe).
  int phase2 = -1;
  int index2 = -1;
};

// The rank's program. Requires C >= 2P (DualPipe asserts num_chunks >= 2 * num_ranks).
std::vector<DualPipeOp> dualpipe_rank_program(int half_ranks, int half_rank, int chunks_per_phase, bool middle_rank);

// The same program as actions: `stage(phase)` and `micro(phase, index)` place it.
std::vector<Action> dualpipe_rank_actions(int half_ranks, int half_rank, int chunks_per_phase, bool middle_rank,
                                          const std::function<int(int)>& stage,
                                          const std::function<int(int, int)>& micro);

}  // namespace stepsim
