#!/usr/bin/env python3
"""A study as a Slurm job array on a single-host Slurm that this check starts and stops (munged,
slurmctld and slurmd on this machine, in WORKDIR, on free ports): `asteria study --slurm`
submits one task a point, `--gather` then writes the table `--jobs 1` writes, byte for byte;
with a run's summary gone, `--slurm --resume` submits that point alone.

Usage: check_slurm_study.py ASTERIA WORKDIR
"""
import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

STUDY = """name: slurm-check
description: three quick runs of the toy model
defaults:
  steps: 4
  warmup_steps: 1
  precondition_frequency: 2
  max_precond_dim: 64
  numerics: shapes
grid:
  - hw: [gb10]
    model: [tiny]
    optimizer: [soap]
    placement: [device]
    staleness: [0, 1, 2]
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def run(command, env, expect_ok=True, timeout=120):
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if expect_ok and result.returncode != 0:
        sys.exit(f"FAIL: {' '.join(command)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


class SingleHostSlurm:
    """munged, slurmctld and slurmd of this machine, configured under `root`."""

    def __init__(self, root):
        self.root = root
        for d in ("state", "spool", "munge", "log"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        self.key = os.path.join(root, "munge", "munge.key")
        with open(self.key, "wb") as f:
            f.write(os.urandom(128))
        os.chmod(self.key, 0o600)
        self.socket = os.path.join(root, "munge", "sock")
        self.conf = os.path.join(root, "slurm.conf")
        host = socket.gethostname().split(".")[0]
        user = getpass.getuser()
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=asteriacheck
SlurmctldHost={host}(127.0.0.1)
AuthType=auth/munge
AuthInfo=socket={self.socket}
CredType=cred/munge
SlurmUser={user}
SlurmdUser={user}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MpiDefault=none
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count() or 1} State=UNKNOWN
PartitionName=check Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")
        self.env = dict(os.environ, SLURM_CONF=self.conf, OPENBLAS_NUM_THREADS="1")

    def start(self):
        run(["munged", "--force", "-S", self.socket, f"--key-file={self.key}",
             f"--log-file={self.root}/log/munged.log", f"--pid-file={self.root}/munge/munged.pid",
             f"--seed-file={self.root}/munge/seed"], self.env)
        run(["slurmctld", "-f", self.conf], self.env)
        run(["slurmd", "-f", self.conf], self.env)
        for _ in range(60):
            state = run(["sinfo", "-h", "-o", "%T"], self.env, expect_ok=False).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        sys.exit(f"FAIL: the single-host Slurm did not come up (sinfo: {state!r}); logs in {self.root}/log")

    def wait_for_jobs(self, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if not run(["squeue", "-h"], self.env).stdout.strip():
                return
            time.sleep(0.5)
        sys.exit("FAIL: the job array did not finish in time")

    def stop(self):
        for pid_file in ("slurmd.pid", "slurmctld.pid", "munge/munged.pid"):
            path = os.path.join(self.root, pid_file)
            try:
                pid = int(read(path).decode().strip())
                os.kill(pid, signal.SIGTERM)
                for _ in range(50):
                    os.kill(pid, 0)
                    time.sleep(0.1)
            except (OSError, ValueError):
                pass


def main():
    asteria, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    study = os.path.join(work, "study.yaml")
    with open(study, "w") as f:
        f.write(STUDY)
    slurm = SingleHostSlurm(os.path.join(work, "slurm"))
    try:
        slurm.start()
        env = slurm.env
        one = os.path.join(work, "one")
        run([asteria, "study", study, "--no-plots", "--jobs", "1", "--out", one], env)
        array = os.path.join(work, "array")
        submitted = run([asteria, "study", study, "--out", array, "--slurm"], env)
        if "submitted Slurm job array" not in submitted.stdout or "--array=0-2" not in read(
                os.path.join(array, "slurm", "array.sh")).decode():
            sys.exit(f"FAIL: no array of the three points:\n{submitted.stdout}")
        slurm.wait_for_jobs()
        run([asteria, "study", study, "--out", array, "--gather", "--no-plots"], env)
        for name in ("table.csv", "table.md"):
            if read(os.path.join(one, name)) != read(os.path.join(array, name)):
                sys.exit(f"FAIL: {name} of the job array differs from --jobs 1's")
        print("ok: the Slurm job array's table is --jobs 1's, byte for byte")

        os.remove(os.path.join(array, "runs", "gb10_tiny_soap_device_s1", "summary.json"))
        resubmitted = run([asteria, "study", study, "--out", array, "--slurm", "--resume"], env)
        if "--array=1\n" not in read(os.path.join(array, "slurm", "array.sh")).decode():
            sys.exit(f"FAIL: --resume should submit point 1 alone:\n{resubmitted.stdout}")
        slurm.wait_for_jobs()
        run([asteria, "study", study, "--out", array, "--gather", "--no-plots"], env)
        if read(os.path.join(one, "table.csv")) != read(os.path.join(array, "table.csv")):
            sys.exit("FAIL: the resubmitted point's table differs")
        done = run([asteria, "study", study, "--out", array, "--slurm", "--resume"], env)
        if "every point has its summary" not in done.stdout:
            sys.exit(f"FAIL: nothing left to submit, yet:\n{done.stdout}")
        print("ok: --slurm --resume submits only the point without a summary, then nothing")
    finally:
        slurm.stop()


if __name__ == "__main__":
    main()
