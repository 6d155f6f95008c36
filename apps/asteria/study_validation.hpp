#pragma once
// Checks a study's runs the way `asteria sim` would check their inputs, before any run starts:
// a broken profile or a missing model is one message naming the study file and where the value
// was written, not one failed run per point.
#include <string>
#include <vector>

#include "apps/asteria/study_spec.hpp"

namespace asteria::cli::study {

// One problem with a run's inputs, as an InputError of the study file would name it.
struct RunProblem {
  std::string field;        // where the value at fault was written: "grid[0].hw[1]"
  std::string expectation;  // what was expected, the line, then the underlying error in full
};

// Every problem with the runs' inputs:
//  - each distinct hardware profile loads;
//  - each distinct model config loads;
//  - units and nodes agree with the profile's units per node;
//  - a straggler's rank is one of the run's units;
//  - the run's settings read and validated as asteria sim reads them (its hyperparameters with
//    the optimizer's defaults, settings that exclude each other, a plan file that reads).
// A problem shared by several runs is reported once, where its value first appears.
std::vector<RunProblem> run_input_problems(const StudySpec& spec);

// Throws one InputError listing every problem, one a line, when there is any: its source is the
// study file (spec.source) and its field that of the first problem.
void check_run_inputs(const StudySpec& spec);

}  // namespace asteria::cli::study
