#include "core/runtime/driver/training_model.hpp"

#include "core/common/error.hpp"

namespace asteria::runtime {

std::string_view to_string(ModelPass pass) noexcept {
  return pass == ModelPass::whole_step ? "whole_step" : "layer_by_layer";
}

ModelPass parse_model_pass(std::string_view text, const std::string& source, const std::string& field) {
  for (ModelPass pass : {ModelPass::layer_by_layer, ModelPass::whole_step})
    if (text == to_string(pass)) return pass;
  throw InputError(source, field, "layer_by_layer or whole_step, found '" + std::string(text) + "'");
}

}  // namespace asteria::runtime
