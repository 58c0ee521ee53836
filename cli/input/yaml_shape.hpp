#pragma once
// What yaml-cpp's loader lets through silently: a key given twice in one map (the first would
// win) and a second document after `---` (it would be ignored). Both are refused as InputError.
#include <cstddef>
#include <string>

namespace stepsim::cli {

// The most nodes (scalars, lists, maps) a YAML document may hold: yaml-cpp takes some hundreds of
// bytes a node, so 1,000,000 is a few hundred MB, and no scenario comes near it.
inline constexpr std::size_t kMaxYamlNodes = 1'000'000;  // the message says "1,000,000"

// Reads `text` as YAML events (aliases are not expanded, so a billion-laughs document costs
// nothing here) and throws InputError(file, line, key, ...) at the first duplicate key, second
// document or node past kMaxYamlNodes. Keys are reported below `prefix` ("" for a file, the dotted
// key for a --set value). Call it before the text is loaded (the loader's memory grows with the
// nodes); a syntax error is reported as the loader would ("not valid YAML: ...").
void check_yaml_shape(const std::string& text, const std::string& file, const std::string& prefix = "");

}  // namespace stepsim::cli
