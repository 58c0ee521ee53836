#pragma once
// The one error every lowering throws for a spec it cannot take (unknown schedule, counts it
// cannot run, missing times). `key` names the scenario key at fault, relative to the kind's
// section ("schedule", "generation.chunk"), so that cli/input can point at the file and line.
#include <stdexcept>
#include <string>

namespace stepsim {

class SpecError : public std::runtime_error {
 public:
  SpecError(std::string key, const std::string& what) : std::runtime_error(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace stepsim
