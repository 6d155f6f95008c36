// Nothing to define: device_costs.hpp forwards runtime::phase_costs and runtime::combine to
// optim::phase_costs and optim::combine (core/optim/shape_model.cpp).
#include "core/runtime/driver/device_costs.hpp"
