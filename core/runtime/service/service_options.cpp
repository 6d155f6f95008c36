#include "core/runtime/service/service_options.hpp"

#include "core/common/error.hpp"

namespace asteria::runtime {

std::string_view to_string(PublishPolicy policy) noexcept {
  switch (policy) {
    case PublishPolicy::deterministic: return "deterministic";
    case PublishPolicy::opportunistic: return "opportunistic";
  }
  return "deterministic";
}

PublishPolicy parse_publish_policy(std::string_view name, const std::string& source) {
  if (name == "deterministic") return PublishPolicy::deterministic;
  if (name == "opportunistic") return PublishPolicy::opportunistic;
  throw InputError(source, "publish policy",
                   "expected \"deterministic\" or \"opportunistic\", found \"" + std::string(name) + "\"");
}

std::string_view to_string(RefreshSite site) noexcept { return site == RefreshSite::device ? "device" : "host"; }

RefreshSite parse_refresh_site(std::string_view name, const std::string& source) {
  if (name == "host") return RefreshSite::host;
  if (name == "device") return RefreshSite::device;
  throw InputError(source, "refresh site", "expected \"host\" or \"device\", found \"" + std::string(name) + "\"");
}

ServiceOptions service_options(const optim::Hyperparameters& hp, int staleness, PublishPolicy policy) {
  ServiceOptions o;
  o.staleness = staleness;
  o.policy = policy;
  o.max_consecutive_refresh_failures = hp.max_consecutive_refresh_failures;
  o.non_finite = hp.non_finite;
  o.max_consecutive_non_finite = hp.max_consecutive_non_finite;
  return o;
}

void validate(const ServiceOptions& options, const std::string& source) {
  if (options.staleness < 0) throw InputError(source, "staleness", "expected an integer >= 0");
  // The device stream runs its work in order: a refresh there holds up the step whatever S says.
  if (options.refresh_site == RefreshSite::device && options.staleness != 0)
    throw InputError(source, "staleness",
                     "0 with refreshes on the device (the synchronous baseline); found " +
                         std::to_string(options.staleness));
  if (options.max_consecutive_refresh_failures < 0)
    throw InputError(source, "max_consecutive_refresh_failures", "expected an integer >= 0");
  if (options.max_consecutive_non_finite < 0)
    throw InputError(source, "max_consecutive_non_finite", "expected an integer >= 0");
}

}  // namespace asteria::runtime
