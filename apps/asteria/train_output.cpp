// The report and parameter checkpoint of `asteria train`.
#include <nlohmann/json.hpp>
#include <ostream>

#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/train.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "core/io/npy.hpp"

namespace asteria::cli {

void print_train(const TrainOutcome& o, std::ostream& out) {
  print_report(o.report, out);
  auto value = [&](std::string_view key) {
    for (const auto& [k, v] : o.report.extra)
      if (k == key) return v.get<double>();
    return 0.0;
  };
  out << "loss " << significant(value("first_loss"), 5) << " -> " << significant(value("final_loss"), 5) << " over "
      << o.report.records.size() << " steps; validation loss " << significant(o.final_validation_loss, 5) << "; "
      << significant(value("tokens_per_s"), 4) << " tokens/s, forward+backward at "
      << significant(value("model_flops_per_s") / 1e9, 4) << " GFLOP/s\n";
}

void write_train(const TrainOutcome& o, const std::filesystem::path& dir) {
  write_report(o.report, rank_directory(dir, o.place));
  if (!o.place.leads()) return;
  if (o.place.ranks > 1)
    io::write_file_atomically(dir / "summary.json", aggregate_summary(o.ranks, summary_json(o.report)).dump(2) + '\n');
  const std::filesystem::path checkpoint = dir / "checkpoint";
  std::filesystem::create_directories(checkpoint);
  nlohmann::ordered_json manifest;
  manifest["model"] = o.report.model;
  manifest["dtype"] = "float32";
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < o.tensors.size(); ++i) {
    const std::string file = o.tensor_names[i] + ".npy";
    const std::vector<linalg::index> shape(o.tensor_shapes[i].begin(), o.tensor_shapes[i].end());
    io::write_npy<float>(checkpoint / file, shape, o.tensors[i]);
    tensors.push_back({{"name", o.tensor_names[i]}, {"file", file}, {"shape", o.tensor_shapes[i]}});
  }
  manifest["tensors"] = tensors;
  io::write_file_atomically(checkpoint / "manifest.json", manifest.dump(2) + '\n');
}

}  // namespace asteria::cli
