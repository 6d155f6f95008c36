#pragma once
// Starting a pool's threads where the system may refuse some: a thread left joinable while a
// constructor unwinds would terminate the process, so the ones already started are told to stop
// and joined, and the refusal becomes an error that names the pool.
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace asteria::real {

// Appends `count` threads running body(i) to `threads`. When the system refuses one: stop(),
// join every thread in `threads`, clear it, and throw InputError(name, "threads", ...) saying how
// many started.
void start_threads(std::vector<std::thread>& threads, int count, const std::string& name,
                   const std::function<void(int)>& body, const std::function<void()>& stop);

}  // namespace asteria::real
