// The alpha-beta ring cost of collectives (models/collectives.hpp) against the book's bucket
// example (reference section 2, figure 10-28/10-29).
#include <catch2/catch.hpp>

#include "models/collectives.hpp"

using namespace stepsim;

namespace {
constexpr Bytes MiB = 1024 * 1024;
constexpr std::int64_t k25GBps = 25'000'000'000;
const Time alpha = 20 * kMicrosecond;  // 0.02 ms start-up per collective
}  // namespace

TEST_CASE("ring AllReduce of 72 MiB: one bucket 4.55 ms, three 24 MiB buckets 4.59 ms", "[collectives]") {
  // t = alpha + 2 (n-1)/n S / B with n = 4, B = 25 GB/s.
  const Time whole = collective_time(Collective::AllReduce, 4, 72 * MiB, alpha, k25GBps);
  const Time third = collective_time(Collective::AllReduce, 4, 24 * MiB, alpha, k25GBps);
  CHECK(to_ms(whole) == Approx(4.55).margin(0.005));
  CHECK(to_ms(3 * third) == Approx(4.59).margin(0.005));
  // 2 x 3/4 x 75,497,472 B = 113,246,208 B at 25 GB/s = 4,529,848.32 ns, rounded up.
  CHECK(whole == alpha + 4'529'849);
  CHECK(ring_bytes_per_member(Collective::AllReduce, 4, 72 * MiB) == 113'246'208);
}

TEST_CASE("AllGather and ReduceScatter move (n-1)/n S per member, AllReduce twice that", "[collectives]") {
  const Bytes s = 1'000'000'000;
  CHECK(ring_bytes_per_member(Collective::AllGather, 48, s) == 979'166'666);
  CHECK(ring_bytes_per_member(Collective::ReduceScatter, 48, s) == 979'166'666);
  CHECK(ring_bytes_per_member(Collective::AllReduce, 48, s) == 1'958'333'333);
  CHECK(ring_bytes_per_member(Collective::AllToAll, 4, s) == 750'000'000);
  // One member exchanges nothing and pays no start-up.
  CHECK(ring_bytes_per_member(Collective::AllGather, 1, s) == 0);
  CHECK(collective_time(Collective::AllReduce, 1, s, alpha, k25GBps) == 0);
  // AllGather of 1 GB among 2 at 1 GB/s: half a second plus alpha.
  CHECK(collective_time(Collective::AllGather, 2, s, alpha, 1'000'000'000) == kSecond / 2 + alpha);
  // No overflow for terabyte buffers.
  CHECK(collective_time(Collective::AllReduce, 1024, 4'000'000'000'000LL, 0, 32'000'000'000) > 0);
  CHECK(collective_short(Collective::ReduceScatter) == "RS");
  CHECK(collective_name(Collective::AllToAll) == "AllToAll");
}
