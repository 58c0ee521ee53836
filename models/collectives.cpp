#include "models/collectives.hpp"

namespace stepsim {

int ring_passes(Collective c) { return c == Collective::AllReduce ? 2 : 1; }

std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::AllGather: return "AllGather";
    case Collective::ReduceScatter: return "ReduceScatter";
    case Collective::AllReduce: return "AllReduce";
    case Collective::AllToAll: return "AllToAll";
  }
  return "?";
}

std::string_view collective_short(Collective c) {
  switch (c) {
    case Collective::AllGather: return "AG";
    case Collective::ReduceScatter: return "RS";
    case Collective::AllReduce: return "AR";
    case Collective::AllToAll: return "A2A";
  }
  return "?";
}

Bytes ring_bytes_per_member(Collective c, int members, Bytes size) {
  if (members <= 1 || size <= 0) return 0;
  const __int128 num = static_cast<__int128>(size) * ring_passes(c) * (members - 1);
  return static_cast<Bytes>(num / members);
}

Time collective_time(Collective c, int members, Bytes size, Time alpha, std::int64_t bytes_per_second) {
  if (members <= 1) return 0;
  if (size <= 0 || bytes_per_second <= 0) return alpha;
  // ceil(passes * (n-1) * S * 1e9 / (n * B)) in 128-bit: a 1 TB buffer does not overflow.
  const __int128 num = static_cast<__int128>(size) * ring_passes(c) * (members - 1) * kSecond;
  const __int128 den = static_cast<__int128>(members) * bytes_per_second;
  return alpha + static_cast<Time>((num + den - 1) / den);
}

}  // namespace stepsim
