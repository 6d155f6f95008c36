#include <iostream>

#include "apps/asteria/verbs.hpp"

int main(int argc, char** argv) {
  asteria::cli::Args args(argv + 1, argv + argc);
  return asteria::cli::run(args, std::cout, std::cerr);
}
