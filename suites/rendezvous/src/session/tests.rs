//! The rendezvous on localhost with ephemeral ports: ranks as threads, ranks as real child
//! processes (this test binary re-executed with torchrun's variables), and its failures.

use std::process::Command;
use std::time::Duration;

use super::*;
use crate::layout::Launcher;

const TEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Set in the children of `ranks_as_child_processes_meet`.
const CHILD_VAR: &str = "PITWALL_RENDEZVOUS_TEST_CHILD";

fn layout(rank: usize, world_size: usize, port: u16) -> Layout {
    Layout {
        rank,
        world_size,
        local_rank: rank,
        launcher: Launcher::Torchrun,
        addr: Some(format!("127.0.0.1:{port}")),
    }
}

/// The blob rank 0 builds in these tests: every hello's payload, in rank order.
fn concat(hellos: &[Hello]) -> Vec<u8> {
    assert!(hellos.iter().enumerate().all(|(i, h)| h.rank == i));
    hellos.iter().flat_map(|h| h.payload.clone()).collect()
}

#[test]
fn ranks_as_threads_share_the_blob_and_the_control_channel() {
    let world = 4;
    let bound = Bound::bind(&layout(0, world, 0)).unwrap();
    let port = bound.port().unwrap();
    let others: Vec<_> = (1..world)
        .map(|r| {
            thread::spawn(move || {
                let mut s =
                    rendezvous(&layout(r, world, port), &[r as u8], concat, TEST_TIMEOUT).unwrap();
                let cmd = s.broadcast(None).unwrap();
                assert_eq!(s.gather(&[cmd[0] + r as u8]).unwrap(), None);
                s.barrier().unwrap();
                s.blob
            })
        })
        .collect();
    let mut s0 = bound.join(&[0], concat, TEST_TIMEOUT).unwrap();
    assert_eq!(s0.blob, vec![0, 1, 2, 3]);
    s0.broadcast(Some(&[10])).unwrap();
    let all = s0.gather(&[10]).unwrap().unwrap();
    assert_eq!(all, vec![vec![10], vec![11], vec![12], vec![13]]);
    s0.barrier().unwrap();
    for h in others {
        assert_eq!(h.join().unwrap(), vec![0, 1, 2, 3]);
    }
}

#[test]
fn rank_zero_sees_where_each_rank_connects_from() {
    let bound = Bound::bind(&layout(0, 2, 0)).unwrap();
    let port = bound.port().unwrap();
    let peer = thread::spawn(move || rendezvous(&layout(1, 2, port), b"x", concat, TEST_TIMEOUT));
    let mut seen = Vec::new();
    bound
        .join(
            b"",
            |h| {
                seen = h.iter().map(|h| h.peer_ip).collect();
                Vec::new()
            },
            TEST_TIMEOUT,
        )
        .unwrap();
    peer.join().unwrap().unwrap();
    let local: IpAddr = "127.0.0.1".parse().unwrap();
    assert_eq!(seen, vec![Some(local), Some(local)]);
}

#[test]
fn one_process_needs_no_network() {
    let s = rendezvous(&Layout::single(), b"me", concat, TEST_TIMEOUT).unwrap();
    assert_eq!((s.rank, s.world_size, s.blob), (0, 1, b"me".to_vec()));
}

#[test]
fn unreachable_rank_zero_is_one_line_naming_the_address() {
    // A port nobody listens on: bind one, note it, close it.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = rendezvous(&layout(1, 2, port), b"", concat, Duration::from_millis(300)).unwrap_err();
    assert!(
        matches!(err, RendezvousError::Connect { rank: 1, .. }),
        "{err}"
    );
    let line = err.to_string();
    assert!(line.contains(&format!("127.0.0.1:{port}")), "{line}");
    assert!(line.contains("hint:") && !line.contains('\n'), "{line}");
}

#[test]
fn missing_ranks_and_mismatched_world_sizes_fail() {
    let err = rendezvous(&layout(0, 3, 0), b"", concat, Duration::from_millis(300)).unwrap_err();
    assert!(
        matches!(
            err,
            RendezvousError::Incomplete {
                joined: 1,
                world_size: 3,
                ..
            }
        ),
        "{err}"
    );

    let bound = Bound::bind(&layout(0, 2, 0)).unwrap();
    let port = bound.port().unwrap();
    let peer =
        thread::spawn(move || rendezvous(&layout(1, 3, port), b"", concat, Duration::from_secs(5)));
    let err = bound.join(b"", concat, TEST_TIMEOUT).unwrap_err();
    assert!(matches!(err, RendezvousError::Protocol { .. }), "{err}");
    assert!(err.to_string().contains("world size 3"), "{err}");
    // Rank 1 sees its connection closed instead of a blob.
    assert!(peer.join().unwrap().is_err());
}

#[test]
fn frames_round_trip_and_refuse_oversized_lengths() {
    let mut buf = Vec::new();
    write_frame(&mut buf, b"hello").unwrap();
    write_frame(&mut buf, b"").unwrap();
    let mut r = buf.as_slice();
    assert_eq!(read_frame(&mut r).unwrap(), b"hello");
    assert_eq!(read_frame(&mut r).unwrap(), b"");
    assert!(read_frame(&mut r).is_err());
    let huge = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes();
    assert!(read_frame(&mut huge.as_slice()).is_err());
    assert_eq!(parse_hello(b"nope"), None);
}

/// A child rank of `ranks_as_child_processes_meet`: does nothing unless that test started it.
#[test]
fn child_rank_entry() {
    if std::env::var_os(CHILD_VAR).is_none() {
        return;
    }
    let layout = Layout::from_env().unwrap();
    assert_eq!(layout.launcher, Launcher::Torchrun);
    let mut s = rendezvous(&layout, &[layout.rank as u8 * 10], concat, TEST_TIMEOUT).unwrap();
    // Each child answers with its rank plus what rank 0 broadcast, proving both directions.
    let cmd = s.broadcast(None).unwrap();
    s.gather(&[cmd[0] + s.rank as u8]).unwrap();
    s.barrier().unwrap();
    assert_eq!(s.blob, vec![0, 10, 20]);
}

#[test]
fn ranks_as_child_processes_meet() {
    let world = 3;
    let bound = Bound::bind(&layout(0, world, 0)).unwrap();
    let port = bound.port().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (1..world)
        .map(|r| {
            Command::new(&exe)
                .args(["--exact", "session::tests::child_rank_entry", "--nocapture"])
                .env(CHILD_VAR, "1")
                .env("RANK", r.to_string())
                .env("WORLD_SIZE", world.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .map(Kill)
                .unwrap()
        })
        .collect();
    let mut s = bound.join(&[0], concat, TEST_TIMEOUT).unwrap();
    s.broadcast(Some(&[100])).unwrap();
    let all = s.gather(&[100]).unwrap().unwrap();
    s.barrier().unwrap();
    assert_eq!(all, vec![vec![100], vec![101], vec![102]]);
    for mut c in children {
        assert!(c.0.wait().unwrap().success());
    }
}

/// A child rank, killed if the test fails first (it would otherwise wait for rank 0 for long).
struct Kill(std::process::Child);

impl Drop for Kill {
    fn drop(&mut self) {
        // Already exited when the test passed; nothing to report either way.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
