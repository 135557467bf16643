// plugin_exercise.h: the part of `portico-ctl plugin verify` that runs plugin code: load one
// plugin with the hosts' loader (alone: kinds it reads may come from other plugins), find which
// library defines each of its undefined symbols, check its kinds' schemas, and feed random,
// broken and malformed objects through the host's validation (ObjectValidator) and its
// processors (through the controller's own HostContext and ResultCollector).
//
// ExercisePlugin is meant to run in a child process (core/common/child_run.h): a crash or a hang
// takes only the child down; before each input it writes what it is about to try to `scratch`,
// so the parent can name the input that crashed or hung.
// Thread-safety: single-threaded; call once per process (plugins are never unloaded).
#ifndef PORTICO_CONTROLLER_CTL_PLUGIN_EXERCISE_H_
#define PORTICO_CONTROLLER_CTL_PLUGIN_EXERCISE_H_

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/plugin/elf_dynamic.h"
#include "core/plugin/plugin_verify.h"

namespace portico::ctl {

// ExerciseOptions bound the random inputs.
struct ExerciseOptions {
  int iterations = 400;  // inputs per kind with a processor
  uint64_t seed = 1;
};

// ExerciseReport receives findings and notes as they are found.
struct ExerciseReport {
  std::function<void(const core::VerifyFinding&)> finding;
  std::function<void(const std::string&)> note;
};

// OneLine makes `text` fit in a finding: control bytes become '?', and past `most` bytes it is
// cut ("...(N bytes)").
std::string OneLine(std::string_view text, size_t most = 300);

// ExercisePlugin loads `path` and runs the checks above; `dynamic` is its dynamic symbol table
// (from core::VerifyPluginFile). Returns the number of inputs fed.
int ExercisePlugin(const std::filesystem::path& path, const core::ElfDynamic& dynamic,
                   const ExerciseOptions& options, std::span<char> scratch,
                   const ExerciseReport& report);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_PLUGIN_EXERCISE_H_
