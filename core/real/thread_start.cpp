#include "core/real/thread_start.hpp"

#include <system_error>

#include "core/common/error.hpp"

namespace asteria::real {

void start_threads(std::vector<std::thread>& threads, int count, const std::string& name,
                   const std::function<void(int)>& body, const std::function<void()>& stop) {
  threads.reserve(threads.size() + static_cast<std::size_t>(std::max(count, 0)));
  const std::size_t before = threads.size();
  try {
    for (int i = 0; i < count; ++i) threads.emplace_back(body, i);
  } catch (const std::system_error& e) {
    const std::size_t started = threads.size() - before;
    stop();
    for (std::thread& t : threads) t.join();
    threads.clear();
    throw InputError(name, "threads",
                     "at most as many threads as this system lets the process start: " + std::to_string(started) +
                         " of " + std::to_string(count) + " started before: " + e.what());
  }
}

}  // namespace asteria::real
