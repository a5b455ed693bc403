//! Fake machines for the tests: sysfs/procfs trees written into temporary directories.

use super::sysfs::DirSysfs;

/// A temporary root holding the files a test writes.
pub(crate) struct FakeTree {
    dir: tempfile::TempDir,
}

impl FakeTree {
    pub(crate) fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Writes `contents` (plus a newline, as the kernel does) to `rel_path`.
    pub(crate) fn file(&self, rel_path: &str, contents: &str) -> &Self {
        let path = self.dir.path().join(rel_path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("{contents}\n")).unwrap();
        self
    }

    pub(crate) fn sysfs(&self) -> DirSysfs {
        DirSysfs::new(self.dir.path())
    }

    /// Two sockets, 8 cores with 2 threads each: node 0 holds cpus 0-3 and their siblings
    /// 8-11, node 1 holds 4-7 and 12-15. GPU 0000:3b:00.0 sits on node 1.
    pub(crate) fn two_nodes() -> Self {
        let t = Self::new();
        t.file("sys/devices/system/cpu/online", "0-15");
        t.file("sys/devices/system/node/online", "0-1");
        t.file("sys/devices/system/node/node0/cpulist", "0-3,8-11");
        t.file("sys/devices/system/node/node1/cpulist", "4-7,12-15");
        for core in 0..8 {
            let siblings = format!("{core},{}", core + 8);
            for cpu in [core, core + 8] {
                t.file(
                    &format!("sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"),
                    &siblings,
                );
            }
        }
        t.gpu("0000:3b:00.0", "1", "4-7,12-15");
        t
    }

    /// A PCI device with its NUMA node and local cpus.
    pub(crate) fn gpu(&self, bdf: &str, numa_node: &str, local_cpulist: &str) -> &Self {
        self.file(&format!("sys/bus/pci/devices/{bdf}/numa_node"), numa_node);
        self.file(
            &format!("sys/bus/pci/devices/{bdf}/local_cpulist"),
            local_cpulist,
        )
    }

    /// Limits the cpus the (fake) process may use, as a cpuset would.
    pub(crate) fn allowed(&self, cpulist: &str) -> &Self {
        self.file(
            "proc/self/status",
            &format!("Name:\tpitwall\nCpus_allowed:\tffff\nCpus_allowed_list:\t{cpulist}\n"),
        )
    }

    /// A process with the given state whose last cpu was `cpu`.
    pub(crate) fn process(&self, pid: u32, comm: &str, state: char, cpu: usize) -> &Self {
        self.file(
            &format!("proc/{pid}/stat"),
            &stat_line(pid, comm, state, cpu),
        )
    }
}

/// A `proc/<pid>/stat` line with 52 fields, `cpu` in field 39.
pub(crate) fn stat_line(pid: u32, comm: &str, state: char, cpu: usize) -> String {
    let middle = vec!["0"; 35].join(" ");
    let tail = vec!["0"; 13].join(" ");
    format!("{pid} ({comm}) {state} {middle} {cpu} {tail}")
}

impl FakeTree {
    /// Thread `tid` of process `pid` (whose parent is `ppid`) with the given state and last
    /// cpu; the thread whose id is the pid also writes the process's own `stat`.
    pub(crate) fn thread(&self, pid: u32, tid: u32, ppid: u32, state: char, cpu: usize) -> &Self {
        let line = stat_line(tid, "worker", state, cpu).replacen(
            &format!(") {state} 0 "),
            &format!(") {state} {ppid} "),
            1,
        );
        self.file(&format!("proc/{pid}/task/{tid}/stat"), &line);
        if pid == tid {
            self.file(&format!("proc/{pid}/stat"), &line);
        }
        self
    }
}
