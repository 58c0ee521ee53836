#pragma once
// The accelerator presets a job_step's hardware names (`stepsim presets`): each one's figures,
// as an aligned table for people and as JSON. Their sources are in models/accelerators.cpp.
#include <string>

#include <nlohmann/json.hpp>

namespace stepsim::cli {

std::string presets_text();
nlohmann::ordered_json presets_json();

}  // namespace stepsim::cli
