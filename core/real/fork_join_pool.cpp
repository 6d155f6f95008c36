#include "core/real/fork_join_pool.hpp"

#include <algorithm>

#include "core/real/thread_start.hpp"

namespace asteria::real {

ForkJoinPool::ForkJoinPool(int width, const std::string& name) {
  start_threads(helpers_, std::max(width, 1) - 1, name, [this](int) { help(); }, [this] { request_stop(); });
}

void ForkJoinPool::request_stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

ForkJoinPool::~ForkJoinPool() {
  request_stop();
  for (std::thread& t : helpers_) t.join();
}

void ForkJoinPool::take_pieces(Loop& loop) {
  for (std::int64_t p = loop.next.fetch_add(1); p < loop.pieces; p = loop.next.fetch_add(1)) {
    try {
      (*loop.piece)(p);
    } catch (...) {
      std::lock_guard lock(loop.error_mutex);
      if (!loop.error) loop.error = std::current_exception();
    }
  }
}

void ForkJoinPool::help() {
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || (loop_ != nullptr && generation_ != seen); });
    if (stopping_) return;
    seen = generation_;
    Loop* loop = loop_;
    ++helping_;
    lock.unlock();
    take_pieces(*loop);
    lock.lock();
    --helping_;
    finished_.notify_all();
  }
}

void ForkJoinPool::run(std::int64_t pieces, const std::function<void(std::int64_t)>& piece) {
  std::unique_lock run_lock(run_mutex_, std::try_to_lock);
  if (helpers_.empty() || pieces <= 1 || !run_lock.owns_lock()) {
    for (std::int64_t p = 0; p < pieces; ++p) piece(p);
    return;
  }
  Loop loop;
  loop.piece = &piece;
  loop.pieces = pieces;
  {
    std::lock_guard lock(mutex_);
    loop_ = &loop;
    ++generation_;
  }
  wake_.notify_all();
  take_pieces(loop);
  {
    // Every piece done and no helper still holding the loop (it lives on this stack).
    std::unique_lock lock(mutex_);
    loop_ = nullptr;
    finished_.wait(lock, [&] { return helping_ == 0; });
  }
  if (loop.error) std::rethrow_exception(loop.error);
}

}  // namespace asteria::real
