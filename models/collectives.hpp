#pragma once
// Cost of a collective on a ring of n members: the alpha-beta model.
//
//   AllGather, ReduceScatter:  t = alpha + (n-1)/n * S / B
//   AllReduce:                 t = alpha + 2 (n-1)/n * S / B   (ReduceScatter then AllGather)
//   AllToAll:                  t = alpha + (n-1)/n * S / B     (each member keeps 1/n of its S)
//
// S is the full (unsharded) buffer, B the bandwidth of the slowest resource a member's traffic
// crosses, each direction. The bandwidth terms are the ring algorithms' of Thakur, Rabenseifner
// & Gropp, "Optimization of Collective Communication Operations in MPICH" (IJHPCA 2005, sec. 4)
// and Patarasuk & Yuan, "Bandwidth optimal all-reduce algorithms for clusters of workstations"
// (JPDC 2009), which proves 2(n-1)/n * S the lower bound on what each member must send for an
// AllReduce. Those papers charge alpha per ring step ((n-1) or 2(n-1) of them); here, as in the
// book's bucket example (figure 10-28/10-29), alpha is one start-up latency per collective, so
// that a bucket's fixed cost is a single number a scenario states.
#include <cstdint>
#include <string_view>

#include "sim/time.hpp"

namespace stepsim {

enum class Collective : std::uint8_t { AllGather, ReduceScatter, AllReduce, AllToAll };

// How many times each member moves (n-1)/n of the buffer around a ring: 2 for an AllReduce
// (a reduce-scatter, then an all-gather), 1 for the others; the ring takes that many times n - 1
// steps.
int ring_passes(Collective c);

std::string_view collective_name(Collective c);   // "AllGather", ...
std::string_view collective_short(Collective c);  // "AG", "RS", "AR", "A2A"

// Bytes each member sends (and receives) for a collective over `size` bytes among `members`
// (rounded down to whole bytes; 0 for a single member).
Bytes ring_bytes_per_member(Collective c, int members, Bytes size);

// Duration of the collective: alpha + ring bytes / bandwidth, rounded up to the nanosecond
// from the exact fraction (the per-member bytes are not rounded first). A single member has
// nothing to exchange and takes 0.
Time collective_time(Collective c, int members, Bytes size, Time alpha, std::int64_t bytes_per_second);

}  // namespace stepsim
