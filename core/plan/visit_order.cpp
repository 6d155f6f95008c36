#include "core/plan/visit_order.hpp"

namespace asteria::plan {

std::vector<Visit> visit_order(ScheduleOrder order, int layers, int micro_batches) {
  std::vector<Visit> visits;
  if (order == ScheduleOrder::horizontal) {
    for (int m = 0; m < micro_batches; ++m) {
      for (int l = 0; l < layers; ++l) visits.push_back({OpKind::forward, l, m});
      for (int l = layers - 1; l >= 0; --l) visits.push_back({OpKind::backward, l, m});
    }
    return visits;
  }
  // Snake: the micro-batch order reverses at every layer, so the micro-batch a layer ends with is
  // the one the next starts with (its activations are the freshest), across the turn too.
  bool ascending = true;
  auto layer_visits = [&](OpKind kind, int l) {
    for (int i = 0; i < micro_batches; ++i) visits.push_back({kind, l, ascending ? i : micro_batches - 1 - i});
    ascending = !ascending;
  };
  // The last layer's backward starts with the micro-batch its forward ended with.
  for (int l = 0; l < layers; ++l) layer_visits(OpKind::forward, l);
  for (int l = layers - 1; l >= 0; --l) layer_visits(OpKind::backward, l);
  return visits;
}

}  // namespace asteria::plan
