// plugin_verify_command.h: `portico-ctl plugin verify PATH`: judges a plugin file before an
// operator installs it, by the hosts' own rules, and feeds its processors random input.
//
//   portico-ctl plugin verify PATH [--iterations N] [--seed S] [--timeout SECONDS]
//
// Checks (core/plugin/plugin_verify.h for those that read the file, plugin_exercise.h for those
// that run it): the embedded manifest (the hosts' parser) and its ABI; only portico_plugin_v1
// exported; the libraries it needs and the providers of its undefined symbols are the C/C++
// runtimes or declared in the manifest's "libraries"; the hosts' loader accepts it; every
// kind's schema uses only what the host's validator implements; random, broken and malformed
// objects fed through validation to each processor neither crash nor hang it (in a child
// process, killed after --timeout). Every finding is one line "PATH: what; fix" on stdout,
// followed by a summary line.
//
// Exit status: 0 when nothing was found, 1 otherwise (and for a usage error).
// Thread-safety: runs on the main thread; forks one child.
#ifndef PORTICO_CONTROLLER_CTL_PLUGIN_VERIFY_COMMAND_H_
#define PORTICO_CONTROLLER_CTL_PLUGIN_VERIFY_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>

namespace portico::ctl {

// PluginVerifyOptions are the flags of `plugin verify`.
struct PluginVerifyOptions {
  std::string path;
  int iterations = 400;  // inputs per kind with a processor
  uint64_t seed = 1;
  int timeout_seconds = 60;  // for everything that runs plugin code
};

// AddPluginCommand registers `plugin` and its subcommand `verify` on `app`; the exit status is
// stored in `*exit_code`, which must outlive app.parse().
void AddPluginCommand(CLI::App& app, int* exit_code);

// RunPluginVerify executes `plugin verify`, printing to `out` and `err`.
int RunPluginVerify(const PluginVerifyOptions& options, std::ostream& out, std::ostream& err);

}  // namespace portico::ctl

#endif  // PORTICO_CONTROLLER_CTL_PLUGIN_VERIFY_COMMAND_H_
