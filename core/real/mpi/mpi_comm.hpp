#pragma once
// Data-parallel ranks as MPI processes (`mpirun -np N asteria ...`).
//
//   real::MpiSession mpi(argc, argv);  // MPI_Init_thread ... MPI_Finalize
//   real::MpiComm comm(mpi);           // this process's view of MPI_COMM_WORLD
//   options.comm = &comm;              // RealPlatformOptions: the comm outlives the platform
//
// One progress thread per MpiComm makes every MPI call of its groups, in the order the calls
// were issued (one FIFO for all groups): a collective waits there for its `after` work and then
// runs blocking MPI, and its Pending is completed by that thread; the caller never blocks. So
// every rank must issue its collectives, over all groups together, in one order (as blocking
// MPI requires), and an `after` must not depend on a collective issued later.
//
// Values are bitwise those of platform::combine_values on every rank (replicas stay identical,
// and equal the simulator's data-true run): reductions never use MPI_SUM on floats (its order
// is unspecified). An all_reduce is an exchange (MPI_Alltoallv: each rank receives every rank's
// copy of its shard), a sum in group rank order on each rank, then an MPI_Allgatherv; a
// reduce_scatter is the first two steps. Before its data, every collective exchanges a small
// header (MPI_Allgather) naming the call and whether its inputs failed, so that a failed `after`
// or members whose calls differ fail the collective on every member instead of hanging or
// corrupting memory. Bytes-only buffers move their bytes through scratch memory: timing stays
// real in data-free runs.
//
// Errors are exceptions (calls) or failed Pendings (collectives) naming the collective; MPI's
// own errors are returned (MPI_ERRORS_RETURN), never fatal.
#include <memory>
#include <vector>

#include "core/platform/clock.hpp"
#include "core/platform/comm.hpp"
#include "core/real/real_clock.hpp"

namespace asteria::real {

class MpiSession {
 public:
  // MPI_Init_thread, asking for MPI_THREAD_MULTIPLE when `multiple_comms` (several MpiComms
  // alive at once: each has a progress thread) and MPI_THREAD_SERIALIZED otherwise; throws
  // std::runtime_error when MPI provides less, when MPI was initialized before, or when
  // initialization fails. argc/argv may be null.
  explicit MpiSession(int* argc = nullptr, char*** argv = nullptr, bool multiple_comms = false);
  ~MpiSession();  // MPI_Finalize: every MpiComm and every group split from one must be gone
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  // True when the environment says mpirun / mpiexec started this process (Open MPI's
  // OMPI_COMM_WORLD_SIZE, or PMI_SIZE of MPICH's and Slurm's launchers): then a program may
  // create a session; a process started alone runs as one rank without MPI.
  static bool launched_by_mpirun();

  int thread_level() const noexcept { return provided_; }  // the MPI_THREAD_* level provided
  int world_rank() const noexcept { return rank_; }
  int world_size() const noexcept { return size_; }

 private:
  friend class MpiComm;
  int provided_ = 0;
  int rank_ = 0;
  int size_ = 1;
  int live_comms_ = 0;  // changed only by the thread creating and destroying comms
};

struct MpiCommOptions {
  // Where this rank records one activity per collective (track "gpu<world rank> comm"; not
  // owned, must outlive the comm; null: nothing recorded), timed by `clock` (not owned; null: a
  // clock started with the comm). MpiComm::record sets them later (the platform's clock).
  platform::ActivitySink* activities = nullptr;
  const platform::Clock* clock = nullptr;
  // 0: ranks sharing memory (MPI_COMM_TYPE_SHARED) are one node, nodes numbered in the order of
  // their first rank. n > 0: pretend nodes of n consecutive ranks (node groups on one host).
  int ranks_per_node = 0;
};

namespace detail {
class MpiEngine;
}

class MpiComm final : public platform::Comm {
 public:
  // Duplicates MPI_COMM_WORLD (its messages never meet another comm's), finds the nodes and
  // starts the progress thread. Collective over the world. Throws std::runtime_error on MPI
  // errors, std::logic_error when another MpiComm is alive and the session is serialized.
  explicit MpiComm(MpiSession& session, MpiCommOptions options = {});
  // Runs every call issued so far (their `after` work must finish), then stops the thread.
  ~MpiComm() override;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  platform::CommGroup& world() override { return *world_; }
  int node_of(int world_rank) const override;

  // As MpiCommOptions::activities / clock; call before issuing collectives, from the thread
  // that issues them.
  void record(platform::ActivitySink* sink, const platform::Clock* clock = nullptr);

 private:
  MpiSession& session_;
  RealClock own_clock_;
  std::vector<int> node_of_;  // per world rank
  std::shared_ptr<detail::MpiEngine> engine_;  // shared with the groups: they may outlive the comm
  std::unique_ptr<platform::CommGroup> world_;
};

}  // namespace asteria::real
