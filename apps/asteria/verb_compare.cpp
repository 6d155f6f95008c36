#include <ostream>

#include "apps/asteria/verbs.hpp"

namespace asteria::cli {

// Placeholder until the verb is implemented.
int compare_main(const Args& /*args*/, std::ostream& /*out*/, std::ostream& err) {
  err << "asteria compare: not implemented yet\n";
  return 2;
}

}  // namespace asteria::cli
