#pragma once
// A study on a Slurm cluster: a job array with one task per point to run, each task
// `asteria study FILE --out DIR --point $SLURM_ARRAY_TASK_ID` (one point, into runs/<slug>, no
// table); `asteria study FILE --out DIR --gather` then tables what the tasks wrote, and
// `--slurm --resume` submits only the points without a summary (missing or failed).
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "apps/asteria/study_runner.hpp"

namespace asteria::cli::study {

// "0-3,5,7-8": ascending indices as Slurm's --array ranges.
std::string index_ranges(std::span<const std::size_t> indices);

// The points to run: every one, or with `resume` those whose run directory holds no summary
// that reads (missing, failed, half-written).
std::vector<std::size_t> points_to_run(const StudySpec& spec, const std::filesystem::path& out_dir, bool resume);

// The array's batch script. `study_file`, out_dir and the program are made absolute (the tasks
// start wherever Slurm starts them); `sbatch_options` become #SBATCH lines (partition, time, ...).
std::string array_script(const StudySpec& spec, const RunnerOptions& options, const std::filesystem::path& study_file,
                         std::span<const std::size_t> points, std::span<const std::string> sbatch_options);

// Runs `sbatch --parsable SCRIPT` (output in `log`) and returns the job id it prints; InputError
// naming sbatch and its log when it cannot be started or refuses the script.
std::string submit_array(const std::filesystem::path& script, const std::filesystem::path& log);

}  // namespace asteria::cli::study
