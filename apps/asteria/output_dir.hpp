#pragma once
// The one output policy of every verb that writes, checked before any work starts (a typo must
// not cost a training run):
// - a directory output (--out DIR) is created or accepted, proven writable, and must not hold
//   results of an earlier run unless `overwrite`; then exactly those entries are removed, and
//   only when each is what this project writes under its name (a regular file for a file
//   output; for a directory output, one its recogniser accepts). A user's directory named
//   trace.json, or a device file named steps.csv, is refused, never removed.
// - a file output (--out FILE) may replace an existing file only with `overwrite`, and never one
//   that is not a regular file (a device, a directory, a pipe): the write goes through
//   io::write_file_atomically, which renames over the target.
// Nothing else in a directory is touched.
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace asteria::cli {

// What a run writes under one name in its output directory.
struct RunOutput {
  std::string_view name;
  // nullptr: a regular file. Otherwise a directory, and whether one found there is this
  // project's own (and may be removed by --overwrite).
  bool (*directory_is_ours)(const std::filesystem::path&) = nullptr;
};

// The final parameters train writes (checkpoint/: manifest.json and one .npy per tensor).
bool is_checkpoint_output(const std::filesystem::path& dir);

// The names synth, sim and train write into --out.
inline constexpr RunOutput kRunOutputs[] = {{"steps.csv"}, {"summary.json"}, {"plan.txt"},
                                            {"trace.csv"}, {"trace.json"},   {"table.csv"},
                                            {"table.md"},  {"checkpoint", &is_checkpoint_output}};

// Throws InputError(dir, "--out", expectation) when `dir` exists and is not a directory, cannot
// be created, is not writable, holds earlier results (without `overwrite`), or holds something
// under an output's name that this project did not write. `verb` names the command in the
// message.
void prepare_output(const std::filesystem::path& dir, bool overwrite, std::string_view verb,
                    std::span<const RunOutput> outputs = kRunOutputs);

// A single output file (`option` FILE): its directory must exist and be writable; an existing
// file there is refused unless `overwrite`, and anything but a regular file always. Throws
// InputError(file, option, expectation).
void prepare_output_file(const std::filesystem::path& file, bool overwrite, std::string_view verb,
                         std::string_view option = "--out");

}  // namespace asteria::cli
