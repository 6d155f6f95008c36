#include <ostream>

#include "apps/asteria/verbs.hpp"

namespace asteria::cli {

// Placeholder until the verb is implemented.
int demo_main(const Args& /*args*/, std::ostream& /*out*/, std::ostream& err) {
  err << "asteria demo: not implemented yet\n";
  return 2;
}

}  // namespace asteria::cli
