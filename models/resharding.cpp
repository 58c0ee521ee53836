#include "models/resharding.hpp"

#include <algorithm>
#include <stdexcept>

namespace stepsim {

RowRange shard_rows(std::int64_t rows, int ways, int rank) {
  const std::int64_t base = rows / ways, extra = rows % ways;
  RowRange r;
  r.first = rank * base + std::min<std::int64_t>(rank, extra);
  r.count = base + (rank < extra ? 1 : 0);
  return r;
}

std::vector<ShardRead> reshard_reads(std::int64_t rows, int old_ways, int new_ways) {
  if (old_ways < 1 || new_ways < 1 || rows < 0) throw std::invalid_argument("ways must be at least 1");
  std::vector<ShardRead> out;
  int old_rank = 0;
  for (int n = 0; n < new_ways; ++n) {
    const RowRange want = shard_rows(rows, new_ways, n);
    const std::int64_t end = want.first + want.count;
    // Old shards are in row order: walk forward from the one holding want.first.
    while (old_rank + 1 < old_ways && shard_rows(rows, old_ways, old_rank + 1).first <= want.first) ++old_rank;
    for (int o = old_rank; o < old_ways; ++o) {
      const RowRange have = shard_rows(rows, old_ways, o);
      if (have.first >= end) break;
      const std::int64_t lo = std::max(want.first, have.first), hi = std::min(end, have.first + have.count);
      if (hi > lo) out.push_back({n, o, lo - have.first, lo - want.first, hi - lo});
    }
  }
  return out;
}

Bytes checkpoint_tensor_bytes(std::int64_t elements, const StateFormat& format) {
  return elements * format.recoverable();
}

}  // namespace stepsim
