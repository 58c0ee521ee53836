#pragma once
// Changing the tensor-parallel degree of a checkpoint (section 10.4.3, figure 10-31). A matrix
// split along its output rows gives rank r of `ways` the rows [r x rows / ways, (r + 1) x rows /
// ways) (Shoeybi et al. 2019 "Megatron-LM", sec. 3: column-parallel linear layers). Loading it
// at another degree means every new rank reads the pieces of the old shards its rows overlap:
// TP4 -> TP8 on the gate projection [12288, 4096] gives new rank r half of old shard floor(r/2),
// the first half on even ranks, the second on odd ones (1,536 of 3,072 rows each).
//
// A checkpoint holds more than the BF16 weights: the FP32 master copy and both Adam moments are
// split by the same rows, so the matrix's checkpoint bytes follow the state format's recoverable
// bytes per parameter (2 + 4 + 4 + 4 = 14 = 7 x the weights: 96 MiB -> 672 MiB).
#include <cstdint>
#include <vector>

#include "models/training_state.hpp"

namespace stepsim {

struct RowRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
};

// Rank `rank`'s rows of `rows` split `ways` ways (sizes differ by at most one when `ways` does not
// divide `rows`: the first rows mod ways ranks get one more).
RowRange shard_rows(std::int64_t rows, int ways, int rank);

// One contiguous read of a new rank from an old shard.
struct ShardRead {
  int new_rank = 0;
  int old_rank = 0;
  std::int64_t old_offset = 0;  // first row within the old shard
  std::int64_t new_offset = 0;  // where it goes within the new shard
  std::int64_t rows = 0;
};

// Every read, by new rank and then by row. Throws std::invalid_argument for ways < 1.
std::vector<ShardRead> reshard_reads(std::int64_t rows, int old_ways, int new_ways);

// Bytes of `elements` parameters in a recovery checkpoint (weights + master + moments).
Bytes checkpoint_tensor_bytes(std::int64_t elements, const StateFormat& format);

}  // namespace stepsim
