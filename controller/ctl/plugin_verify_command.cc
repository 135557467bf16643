#include "controller/ctl/plugin_verify_command.h"

#include <spdlog/spdlog.h>

#include <iostream>
#include <memory>
#include <sstream>
#include <vector>

#include "controller/ctl/plugin_exercise.h"
#include "core/common/child_run.h"
#include "core/plugin/plugin_verify.h"

namespace portico::ctl {
namespace {

// The child's report lines: "F\t<what>\t<fix>", "N\t<note>", "D\t<inputs fed>".
std::string Flatten(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c == '\t' || c == '\n') ? ' ' : c;
  return out;
}

}  // namespace

int RunPluginVerify(const PluginVerifyOptions& options, std::ostream& out, std::ostream& err) {
  if (options.path.empty()) {
    err << "error: plugin verify needs a plugin file (PATH)\n";
    return 1;
  }
  const std::string& file = options.path;
  core::StaticVerification checked = core::VerifyPluginFile(file);
  std::vector<core::VerifyFinding> findings = checked.findings;
  std::vector<std::string> notes;
  int fed = 0;

  if (checked.record.ok() && checked.dynamic) {
    core::ChildLimits limits;
    limits.deadline = std::chrono::seconds(options.timeout_seconds);
    limits.cpu_seconds = options.timeout_seconds + 5;
    const core::ElfDynamic& dynamic = *checked.dynamic;
    core::ChildOutcome outcome = core::RunInChild(
        [&](int fd, std::span<char> scratch) {
          spdlog::set_level(spdlog::level::off);  // refusals come back as findings
          ExerciseReport report{
              [fd](const core::VerifyFinding& f) {
                core::WriteAll(fd, "F\t" + Flatten(f.what) + "\t" + Flatten(f.fix) + "\n");
              },
              [fd](const std::string& note) { core::WriteAll(fd, "N\t" + Flatten(note) + "\n"); }};
          ExerciseOptions exercise{options.iterations, options.seed};
          int n = ExercisePlugin(file, dynamic, exercise, scratch, report);
          core::WriteAll(fd, "D\t" + std::to_string(n) + "\n");
          return 0;
        },
        limits);
    std::istringstream lines(outcome.output);
    bool done = false;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("F\t", 0) == 0) {
        size_t tab = line.find('\t', 2);
        findings.push_back(
            {line.substr(2, tab - 2), tab == std::string::npos ? "" : line.substr(tab + 1)});
      } else if (line.rfind("N\t", 0) == 0) {
        notes.push_back(line.substr(2));
      } else if (line.rfind("D\t", 0) == 0) {
        done = true;
        fed = std::atoi(line.c_str() + 2);
      }
    }
    if (!outcome.ok() || !done) {
      std::string during = outcome.scratch.empty() ? "" : " while " + OneLine(outcome.scratch, 400);
      if (outcome.timed_out) {
        findings.push_back({"hangs: still running after " +
                                std::to_string(options.timeout_seconds) + " s" + during,
                            "make its hooks return promptly on every input (no unbounded "
                            "loops or waits)"});
      } else {
        findings.push_back({"the host process " + std::string(outcome.exited ? "" : "was ") +
                                outcome.Describe() + during,
                            "fix the plugin so no input crashes it (reproduce with the same "
                            "--seed)"});
      }
    }
  }

  for (const std::string& note : notes) out << file << ": note: " << note << '\n';
  for (const core::VerifyFinding& f : findings) out << f.Line(file) << '\n';
  std::string name = checked.record.DisplayName();
  if (findings.empty()) {
    out << "OK: " << file << " (plugin " << name << ", " << fed << " random inputs)\n";
    return 0;
  }
  out << "FAILED: " << file << " (plugin " << name << "): " << findings.size() << " finding"
      << (findings.size() == 1 ? "" : "s") << '\n';
  return 1;
}

void AddPluginCommand(CLI::App& app, int* exit_code) {
  CLI::App* plugin = app.add_subcommand("plugin", "Work with plugin files");
  plugin->require_subcommand(1);
  auto options = std::make_shared<PluginVerifyOptions>();
  CLI::App* verify = plugin->add_subcommand(
      "verify",
      "Check a plugin file by the hosts' rules and feed its processors random input; one line "
      "per finding, with its fix");
  verify->add_option("path", options->path, "The plugin (.so) to verify")->required();
  verify->add_option("--iterations", options->iterations, "Random inputs per kind")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  verify->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  verify
      ->add_option("--timeout", options->timeout_seconds,
                   "Seconds the plugin's code may run in all before it counts as hung")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  verify->callback(
      [options, exit_code] { *exit_code = RunPluginVerify(*options, std::cout, std::cerr); });
}

}  // namespace portico::ctl
