// A step of a size already seen allocates nothing. The heap is observed by replacing the global
// operator new of this test program with a counting one (the only way to see every allocation
// the library makes); the count is read around the calls under test only.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "core/model/gpt.hpp"
#include "tests/model/model_test_support.hpp"

namespace {
std::atomic<std::size_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form whose
// delete is replaced must allocate with malloc, or a sanitizer sees mismatched pairs.
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace asteria::model {
namespace {

TEST(GptAllocation, StepsNoLargerThanOneSeenAllocateNothing) {
  const workload::ModelConfig c = testing::small_config(workload::MlpKind::swiglu, false, true);
  Gpt<float> gpt(c, 1);
  const std::vector<TokenId> large = testing::random_tokens(3 * 9, c.vocab, 1);
  const std::vector<TokenId> small = testing::random_tokens(2 * 5, c.vocab, 2);
  gpt.forward_backward(large, 3);  // sizes the workspace

  const std::size_t before = allocations.load();
  gpt.forward_backward(large, 3);
  gpt.forward_backward(small, 2);
  gpt.loss(large, 3);
  gpt.forward_backward(large, 3);
  EXPECT_EQ(allocations.load(), before);

  // The counter does see allocations (so the check above could fail).
  const std::vector<int> probe(100);
  EXPECT_GT(allocations.load(), before);
}

}  // namespace
}  // namespace asteria::model
