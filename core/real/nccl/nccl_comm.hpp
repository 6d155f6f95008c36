#pragma once
// Data-parallel ranks on GPUs: the Comm seam's collectives over NCCL, on device buffers. MPI
// starts the processes and carries NCCL's unique id to every rank.
//
//   real::MpiSession mpi(argc, argv);  // mpirun -np N: one rank per GPU
//   real::MpiComm bootstrap(mpi);      // host collectives; the id travels over its world
//   real::NcclComm comm(bootstrap);    // collective: one NCCL communicator over the world
//   platform::CommBuffer grads{device_pointer, count, platform::DType::bf16};
//   platform::Pending done = comm.world().all_reduce(grads, platform::ReduceOp::average, {.after = {backward}});
//
// Buffers given to the collectives are device memory of this rank's GPU (CommBuffer::data;
// checked where they are passed when the calling thread has that device current);
// bytes-only buffers move their bytes through a device scratch buffer grown as needed, so timing
// stays real in data-free runs. Every group of a comm shares one non-blocking CUDA stream and
// one progress thread, which takes the calls in issue order (one FIFO for all groups, as
// MpiComm): it waits for a call's `after` work on the host, enqueues the NCCL call on the stream
// and a completion thread completes the Pending once the call's event has fired. So every rank
// must issue its collectives, over all groups together, in one order, and an `after` must not
// depend on a collective issued later. The caller never blocks, except in split (collective).
//
// NCCL exchanges no headers: members whose calls differ hang or corrupt memory, as in NCCL
// itself, and an `after` that failed on one rank cannot fail the others. That rank still issues
// the NCCL call with its buffer as it is (the other ranks then receive a result built from it,
// and report success) and fails its own Pending: every rank stays in step and none hangs.
// Buffers NCCL refuses on one rank (not device memory) likewise run on scratch memory there.
// NcclCommOptions::check_calls adds MpiComm's header exchange (a small all_gather and a stream
// synchronization before each call, so calls no longer overlap): members whose calls differ, or
// a failed input on any member, then fail the collective on every member and move no data.
//
// Determinism: NCCL adds floats in its own ring / tree order (and averages by scaling each
// input by 1/size before the sum), so reduced values are not bitwise those of
// platform::combine_values (the MPI and simulator backends' rank-order sums); they agree within
// a few ulps times the group size, relative to the sum of the terms' magnitudes. Every rank
// still receives the same bits from one all_reduce, so replicas stay identical among
// themselves. broadcast and all_gather are exact.
//
// Errors are exceptions (construction, split, bad buffers: std::invalid_argument on the calling
// thread, as the other backends) or failed Pendings (collectives) naming the collective and
// NCCL's or CUDA's own words; nothing aborts the process. An NCCL error reported while a call
// is in flight (a peer gone) aborts that group's communicator and fails its later calls.
#include <memory>
#include <vector>

#include "core/platform/clock.hpp"
#include "core/platform/comm.hpp"

namespace asteria::real {

class MpiComm;

struct NcclCommOptions {
  // The CUDA device of this rank. -1: (this rank's index among the ranks of its node, as the
  // bootstrap comm places them) % the number of devices. With MpiCommOptions::ranks_per_node
  // pretending several nodes on one host, name the device instead.
  int device = -1;
  // Where this rank records one activity per collective (track "gpu<world rank> comm"; not
  // owned, must outlive the comm; null: nothing recorded), timed by `clock` (not owned; null: a
  // clock started with the comm). NcclComm::record sets them later.
  platform::ActivitySink* activities = nullptr;
  const platform::Clock* clock = nullptr;
  // Exchange a header before each collective (see above): slower, but mismatched calls and
  // failed inputs fail on every member instead of hanging.
  bool check_calls = false;
};

namespace detail {
class NcclEngine;
}

class NcclComm final : public platform::Comm {
 public:
  // Collective over the bootstrap's world (every rank constructs its NcclComm at the same point
  // of its bootstrap calls): picks the device, sends rank 0's ncclUniqueId over the bootstrap
  // and runs ncclCommInitRank. Throws std::runtime_error naming what failed (on every rank when
  // one rank cannot start: no device, a failed CUDA call), std::invalid_argument for a device
  // that does not exist. `bootstrap` is used during construction only.
  explicit NcclComm(MpiComm& bootstrap, NcclCommOptions options = {});
  // Runs every call issued so far (their `after` work must finish) and destroys the world's
  // communicator (ncclCommAbort instead if one of its calls failed in NCCL). Groups split from
  // it may outlive it; each destroys its communicator when it goes.
  ~NcclComm() override;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  platform::CommGroup& world() override { return *world_; }
  int node_of(int world_rank) const override;  // as the bootstrap comm found the nodes
  platform::Tier buffer_tier() const override { return platform::Tier::device; }  // this rank's GPU

  int device() const noexcept { return device_; }  // the CUDA device of this rank's buffers
  // As NcclCommOptions::activities / clock; call before issuing collectives, from the thread
  // that issues them.
  void record(platform::ActivitySink* sink, const platform::Clock* clock = nullptr);

  // The NCCL version the program runs with, as NCCL_VERSION_CODE (2.28.9: 22809).
  static int nccl_version();

 private:
  std::vector<int> node_of_;  // per world rank
  int device_ = 0;
  std::shared_ptr<detail::NcclEngine> engine_;  // shared with the groups: they may outlive the comm
  std::unique_ptr<platform::CommGroup> world_;
};

}  // namespace asteria::real
