#pragma once
// The --out directory of a run, checked before any work starts: a typo must not cost a training
// run. prepare_output() creates the directory (or accepts an existing one), proves it writable,
// and makes sure no earlier run's results would end up mixed with this one's: when the directory
// already holds result files of an earlier run, it refuses (saying how to proceed) unless
// `overwrite`, in which case exactly those files are removed first. Nothing else in the
// directory is touched.
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

namespace asteria::cli {

// The names a run writes into --out (files or directories), to be cleared or refused.
inline constexpr std::string_view kRunOutputs[] = {"steps.csv", "summary.json", "plan.txt", "trace.csv",
                                                   "trace.json", "table.csv",   "table.md", "checkpoint"};

// Throws InputError(dir, "--out", expectation) when `dir` exists and is not a directory, cannot
// be created, is not writable, or holds earlier results (without `overwrite`). `verb` names the
// command in the message.
void prepare_output(const std::filesystem::path& dir, bool overwrite, std::string_view verb,
                    std::span<const std::string_view> outputs = kRunOutputs);

}  // namespace asteria::cli
