#pragma once
// A digest over a result file's JSON, so that a file read back (a search shard merged) is known
// to be the one stepsim wrote: an edited count, step time or setting would otherwise be merged
// as measured (a negative step ranked first; a count of 1e30 overflowing the sum).
//
// FNV-1a, 64 bits (Fowler, Noll, Vo), over the compact dump of the object without its "digest"
// key, keys sorted: the same bytes whether the object is the writer's (ordered) or the reader's.
// It guards against edits and damage, not against someone who recomputes it.
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace stepsim::cli {

inline std::string json_digest(const nlohmann::json& object) {
  nlohmann::json canonical = object;
  canonical.erase("digest");
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : canonical.dump()) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("fnv1a64:{:016x}", h);
}

// The object with its digest added (last): what a writer writes.
inline nlohmann::ordered_json with_digest(nlohmann::ordered_json object) {
  object["digest"] = json_digest(nlohmann::json::parse(object.dump()));
  return object;
}

// Whether `object` carries the digest of its own contents.
inline bool digest_holds(const nlohmann::json& object) {
  const auto it = object.find("digest");
  return it != object.end() && it->is_string() && it->get<std::string>() == json_digest(object);
}

}  // namespace stepsim::cli
