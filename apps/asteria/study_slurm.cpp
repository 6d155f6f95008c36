#include "apps/asteria/study_slurm.hpp"

#include <fstream>
#include <sstream>

#include "apps/asteria/study_process.hpp"
#include "core/common/error.hpp"

namespace asteria::cli::study {

namespace {

std::string absolute_text(const std::filesystem::path& path) {
  return std::filesystem::absolute(path).lexically_normal().string();
}

// A program named by a path is made absolute; a bare name is looked up in PATH where it runs.
std::string program_text(const std::string& program) {
  return program.find('/') != std::string::npos ? absolute_text(program) : program;
}

}  // namespace

std::string index_ranges(std::span<const std::size_t> indices) {
  std::string text;
  for (std::size_t k = 0; k < indices.size();) {
    std::size_t end = k;
    while (end + 1 < indices.size() && indices[end + 1] == indices[end] + 1) ++end;
    if (!text.empty()) text += ',';
    text += std::to_string(indices[k]);
    if (end > k) text += '-' + std::to_string(indices[end]);
    k = end + 1;
  }
  return text;
}

std::vector<std::size_t> points_to_run(const StudySpec& spec, const std::filesystem::path& out_dir, bool resume) {
  std::vector<std::size_t> points;
  for (std::size_t i = 0; i < spec.points.size(); ++i)
    if (!resume || read_run_result(out_dir / relative_run_dir(spec.points[i]), "").failed()) points.push_back(i);
  return points;
}

std::string array_script(const StudySpec& spec, const RunnerOptions& options, const std::filesystem::path& study_file,
                         std::span<const std::size_t> points, std::span<const std::string> sbatch_options) {
  const std::string dir = absolute_text(options.out_dir);
  std::vector<std::string> task = {program_text(options.asteria), "study", absolute_text(study_file), "--out", dir,
                                   "--asteria", program_text(options.asteria), "--point"};
  if (options.traces) task.insert(task.end() - 1, "--traces");
  std::string script = "#!/bin/sh\n# The points of study " + spec.name + " as a Slurm job array, one task a point.\n";
  script += "#SBATCH --job-name=asteria-study-" + spec.name + "\n";
  script += "#SBATCH --array=" + index_ranges(points) + "\n";
  script += "#SBATCH --output=" + dir + "/slurm/point-%a.log\n";
  for (const std::string& option : sbatch_options) script += "#SBATCH " + option + "\n";
  script += "exec " + shell_line(task) + " \"$SLURM_ARRAY_TASK_ID\"\n";
  return script;
}

std::string submit_array(const std::filesystem::path& script, const std::filesystem::path& log) {
  const JobEnd end = run_job(Job{"sbatch", {"--parsable", script.string()}, log});
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  if (!end.succeeded())
    throw InputError("sbatch", "submission",
                     "a job array Slurm accepts; sbatch " + end.describe() + " (its output: " + log.string() + "): " +
                         text.str());
  std::string id = text.str();
  id = id.substr(0, id.find_first_of(";\n"));  // --parsable: "jobid[;cluster]"
  if (id.empty()) throw InputError("sbatch", "submission", "a job id on sbatch's output, found none in " + log.string());
  return id;
}

}  // namespace asteria::cli::study
