// _asteria: the runtime's Python binding. Tensors cross without copies, as DLPack capsules
// (torch.utils.dlpack.to_dlpack), borrowed for the call: the caller keeps each capsule alive and
// consumable. Each must be float32, dense, row-major, of its parameter's size, in host memory; a
// mismatch is a ValueError naming the parameter. The GIL is released while the runtime works.
#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "apps/python/optimizer_session.hpp"
#include "core/common/error.hpp"

namespace py = pybind11;
using asteria::python::OptimizerSession;
using asteria::python::ParameterShape;
using asteria::python::ParameterUse;

namespace {

// Which tensor a capsule is, for an error message (built only when one is raised).
struct TensorRole {
  const OptimizerSession& session;
  std::size_t parameter;
  const char* what;  // "" or " gradient"
  std::string text() const {
    return "parameter " + std::to_string(parameter) + " (" + session.parameter_name(parameter) + ")" + what;
  }
};

// A DLPack capsule's tensor, checked, borrowed (the capsule stays the caller's: not renamed, its
// deleter not called).
float* memory_of_dlpack(const py::handle& object, const TensorRole& role) {
  if (!PyCapsule_IsValid(object.ptr(), "dltensor"))
    throw py::value_error(role.text() + ": expected a DLPack capsule (torch.utils.dlpack.to_dlpack) not yet consumed");
  const auto* managed = static_cast<const DLManagedTensor*>(PyCapsule_GetPointer(object.ptr(), "dltensor"));
  const DLTensor& t = managed->dl_tensor;
  if (t.device.device_type != kDLCPU)
    throw py::value_error(role.text() + ": in device memory (DLPack device type " +
                          std::to_string(t.device.device_type) + "); the runtime takes host tensors (the device path "
                          "is not bound yet)");
  if (t.dtype.code != kDLFloat || t.dtype.bits != 32 || t.dtype.lanes != 1)
    throw py::value_error(role.text() + ": expected float32 values, found DLPack type code " +
                          std::to_string(t.dtype.code) + " of " + std::to_string(t.dtype.bits) + " bits");
  std::size_t count = 1;
  std::int64_t stride = 1;
  bool dense = true;
  for (int d = t.ndim - 1; d >= 0; --d) {
    const std::int64_t extent = t.shape[d];
    if (t.strides != nullptr && extent > 1 && t.strides[d] != stride) dense = false;
    stride *= extent;
    count *= static_cast<std::size_t>(extent);
  }
  if (!dense) throw py::value_error(role.text() + ": expected a contiguous tensor (row-major strides)");
  const std::size_t expected = role.session.element_count(role.parameter);
  if (count != expected)
    throw py::value_error(role.text() + ": expected " + std::to_string(expected) + " elements, found " +
                          std::to_string(count));
  return reinterpret_cast<float*>(static_cast<char*>(t.data) + t.byte_offset);
}

// Every parameter's and gradient's memory, checked (a ValueError naming the parameter).
std::pair<std::vector<float*>, std::vector<float*>> memory_of_all(const OptimizerSession& s, const py::list& weights,
                                                                  const py::list& gradients) {
  const std::size_t n = s.parameter_count();
  if (weights.size() != n || gradients.size() != n)
    throw py::value_error(std::to_string(n) + " parameter and gradient capsules expected, found " +
                          std::to_string(weights.size()) + " and " + std::to_string(gradients.size()));
  std::vector<float*> w(n), g(n);
  for (std::size_t i = 0; i < n; ++i) {
    w[i] = memory_of_dlpack(weights[i], {s, i, ""});
    g[i] = memory_of_dlpack(gradients[i], {s, i, " gradient"});
  }
  return {std::move(w), std::move(g)};
}

py::dict step_record(const asteria::runtime::StepRecord& r) {
  py::dict d;
  d["step"] = r.step;
  d["step_time_s"] = r.step_time_s;
  d["compute_s"] = r.compute_s;
  d["visible_optimizer_s"] = r.visible_optimizer_s;
  d["refresh_wait_s"] = r.refresh_wait_s;
  d["state_move_wait_s"] = r.state_move_wait_s;
  d["refreshes_submitted"] = r.refreshes_submitted;
  d["refreshes_published"] = r.refreshes_published;
  d["max_staleness"] = r.max_staleness;
  return d;
}

}  // namespace

PYBIND11_MODULE(_asteria, m) {
  m.doc() = "Asteria's runtime: second-order optimizers with tiered state and asynchronous refreshes";
  // The library's bad-input errors name the file or source, the field and the expectation.
  py::register_exception<asteria::InputError>(m, "InputError", PyExc_ValueError);

  py::class_<OptimizerSession>(m, "Session")
      .def(py::init([](const std::vector<std::string>& arguments, const std::vector<std::string>& names,
                       const std::vector<std::vector<std::int64_t>>& shapes, const std::vector<std::string>& uses,
                       double tokens_per_step, bool hooked) {
             if (names.size() != shapes.size()) throw py::value_error("Session: one name per shape");
             if (!uses.empty() && uses.size() != shapes.size()) throw py::value_error("Session: one use per shape");
             std::vector<ParameterShape> parameters;
             for (std::size_t i = 0; i < names.size(); ++i) {
               ParameterShape p{names[i], shapes[i]};
               p.use = !uses.empty() ? asteria::python::parse_parameter_use(uses[i], "use of parameter " + std::to_string(i))
                       : shapes[i].size() >= 2 ? ParameterUse::matmul
                                                : ParameterUse::elementwise;
               parameters.push_back(std::move(p));
             }
             py::gil_scoped_release release;  // the platform starts its threads
             return std::make_unique<OptimizerSession>(arguments, parameters, tokens_per_step, hooked);
           }),
           py::arg("arguments"), py::arg("names"), py::arg("shapes"), py::arg("uses") = std::vector<std::string>{},
           py::arg("tokens_per_step") = 0.0, py::arg("hooked") = false)
      .def(
          "step",
          [](OptimizerSession& s, const py::list& weights, const py::list& gradients) {
            auto [w, g] = memory_of_all(s, weights, gradients);
            asteria::runtime::StepRecord record;
            {
              py::gil_scoped_release release;
              record = s.step(w, g);
            }
            return step_record(record);
          },
          py::arg("weights"), py::arg("gradients"))
      .def("element_count", &OptimizerSession::element_count, py::arg("parameter"))
      // Hooked sessions: the training loop's passes as its hooks report them.
      .def(
          "begin_step",
          [](OptimizerSession& s, const py::list& weights) {
            if (weights.size() != s.parameter_count())
              throw py::value_error(std::to_string(s.parameter_count()) + " parameter capsules expected");
            std::vector<float*> w(weights.size());
            for (std::size_t i = 0; i < w.size(); ++i)
              w[i] = memory_of_dlpack(weights[i], {s, i, ""});
            py::gil_scoped_release release;
            s.begin_step(w);
          },
          py::arg("weights"))
      .def("forward_done", &OptimizerSession::forward_done, py::arg("parameter"), py::arg("micro_batch"))
      .def(
          "backward_done",
          [](OptimizerSession& s, std::size_t i, int micro_batch, const py::handle& gradient) {
            if (i >= s.parameter_count()) throw py::value_error("backward_done: no parameter " + std::to_string(i));
            s.backward_done(i, micro_batch, memory_of_dlpack(gradient, {s, i, " gradient"}));
          },
          py::arg("parameter"), py::arg("micro_batch"), py::arg("gradient"))
      .def(
          "abandon_step",
          [](OptimizerSession& s, const std::string& reason) {
            py::gil_scoped_release release;
            s.abandon_step(reason);
          },
          py::arg("reason"))
      .def_property_readonly("step_in_flight", &OptimizerSession::step_in_flight)
      .def_property_readonly("hooked", &OptimizerSession::hooked)
      .def_property_readonly("micro_batches", &OptimizerSession::micro_batches)
      .def(
          "save",
          [](OptimizerSession& s, const std::string& dir, const py::list& weights, const py::list& gradients) {
            auto [w, g] = memory_of_all(s, weights, gradients);
            py::gil_scoped_release release;
            s.save(dir, w, g);
          },
          py::arg("dir"), py::arg("weights"), py::arg("gradients"))
      .def(
          "restore",
          [](OptimizerSession& s, const std::string& dir, const py::list& weights, const py::list& gradients) {
            auto [w, g] = memory_of_all(s, weights, gradients);
            py::gil_scoped_release release;
            s.restore(dir, w, g);
          },
          py::arg("dir"), py::arg("weights"), py::arg("gradients"))
      .def_property_readonly("steps_done", &OptimizerSession::steps_done)
      .def("finish", [](OptimizerSession& s) {
        py::gil_scoped_release release;
        s.finish();
      })
      .def_property_readonly("block_count", &OptimizerSession::block_count)
      .def_property_readonly("description", &OptimizerSession::description);
}
