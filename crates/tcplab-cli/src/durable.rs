//! The files of a run directory hashed as they are written and flushed to disk as soon as they
//! are closed, for COMPLETE.json (`rundir.rs`: each file's size and SHA-256, written once every
//! file is on disk).
//!
//! A file tcplab writes itself (summary.json, scenario.toml) goes through a [`Sink`]: its bytes
//! are hashed on their way to the file, so the seal need not read them back (summary.json is
//! 20 MB at 4,096 flows: reading and hashing it again was ~25 ms of a 0.73 s run). Past
//! [`HANDOFF_BYTES`] a sink hands its file, its hash and the chunks still to come to a thread of
//! its own, which hashes and writes them while the serializer produces the next ones, then
//! flushes the file to disk. A small file is hashed where it is written and flushed on a thread
//! at once. Either way the flush runs beside the rest of the run's output instead of after it;
//! the seal waits for every one of them before it writes the marker.
//!
//! Threads: every helper thread of one run directory counts against [`Budget`] (at most
//! [`MAX_THREADS`] at once, each with a small stack); past it, a sink hashes and writes where it
//! is, and a flush is left to the seal, which runs the remaining ones on at most as many threads.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use sha2::{Digest, Sha256};

/// Helper threads one run directory runs at once: enough for its few files' flushes to go to
/// the disk together (a journaling filesystem commits concurrent flushes as one), few enough
/// that a run with many files (pcaps, traces) does not start a thread per file.
pub const MAX_THREADS: usize = 4;

/// A helper thread's stack: it only hashes, writes and calls fsync.
const STACK_BYTES: usize = 128 << 10;

/// Bytes a sink buffers before it hashes and writes them (one write call each).
pub const CHUNK_BYTES: usize = 1 << 16;

/// Bytes a sink hashes and writes itself before it hands the rest to a thread: below this a
/// thread costs more than it saves (a 16-flow summary.json is 82 KB).
pub const HANDOFF_BYTES: u64 = 1 << 20;

/// The helper threads a run directory may still start.
#[derive(Clone)]
pub struct Budget(Arc<AtomicUsize>);

/// One thread of a [`Budget`], given back when dropped.
pub struct Ticket(Arc<AtomicUsize>);

impl Budget {
    pub fn new(threads: usize) -> Budget {
        Budget(Arc::new(AtomicUsize::new(threads)))
    }

    /// A thread, if the budget has one left.
    pub fn take(&self) -> Option<Ticket> {
        self.0.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1)).ok().map(|_| Ticket(self.0.clone()))
    }

    /// Threads left.
    #[cfg(test)]
    pub fn left(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// Start `f` on a thread of its own holding `ticket`; `None` (and `f` not run) if no thread
/// could be started.
fn spawn<T: Send + 'static>(ticket: Ticket, f: impl FnOnce() -> T + Send + 'static) -> Option<JoinHandle<T>> {
    std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let r = f();
            drop(ticket);
            r
        })
        .ok()
}

/// A file's size and SHA-256 as COMPLETE.json lists them.
#[derive(Clone, Debug, PartialEq)]
pub struct Digest256 {
    pub bytes: u64,
    pub sha256: [u8; 32],
}

impl Digest256 {
    pub fn hex(&self) -> String {
        self.sha256.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A written file: its digest, and its flush to disk (under way on a thread, or still to do).
pub struct Written {
    pub name: String,
    state: State,
}

enum State {
    /// A thread finishes the file (its last chunks, when it took them over) and flushes it.
    Thread(JoinHandle<std::io::Result<Digest256>>),
    /// Complete and hashed; the flush is the seal's.
    Unsynced(File, Digest256),
}

impl Written {
    /// Wait for the file to be complete and on disk: its digest. A file still to flush is
    /// returned with it, for the seal to flush.
    pub fn wait(self) -> std::io::Result<(Digest256, Option<File>)> {
        match self.state {
            State::Thread(h) => h.join().map_err(|_| std::io::Error::other(format!("{}: the writing thread panicked", self.name)))?.map(|d| (d, None)),
            State::Unsynced(f, d) => Ok((d, Some(f))),
        }
    }
}

/// What a sink sends its worker: first the file and its hash so far, then the chunks.
enum Job {
    Start(File, Sha256, u64),
    Chunk(Vec<u8>),
}

/// The worker a sink handed its file to: the chunks go to it, its result comes back.
struct Worker {
    jobs: SyncSender<Job>,
    done: JoinHandle<std::io::Result<Digest256>>,
}

fn work(jobs: std::sync::mpsc::Receiver<Job>) -> std::io::Result<Digest256> {
    let Ok(Job::Start(mut file, mut hash, mut bytes)) = jobs.recv() else {
        return Err(std::io::Error::other("the writing thread got no file"));
    };
    for job in jobs {
        let Job::Chunk(chunk) = job else { continue };
        hash.update(&chunk);
        file.write_all(&chunk)?;
        bytes += chunk.len() as u64;
    }
    file.sync_all()?;
    Ok(Digest256 { bytes, sha256: hash.finalize().into() })
}

/// A file written, hashed on the way, and flushed to disk once finished ([`Sink::finish`]).
pub struct Sink {
    name: String,
    budget: Budget,
    handoff: u64,
    buf: Vec<u8>,
    /// The file and its hash while this thread writes them (None once a worker has them).
    here: Option<(File, Sha256)>,
    worker: Option<Worker>,
    /// Bytes hashed and written here, or sent to the worker.
    bytes: u64,
}

impl Sink {
    pub fn new(name: &str, file: File, budget: &Budget) -> Sink {
        Sink::with_handoff(name, file, budget, HANDOFF_BYTES)
    }

    /// A sink that hands its file to a thread once `handoff` bytes are written (tests).
    pub fn with_handoff(name: &str, file: File, budget: &Budget, handoff: u64) -> Sink {
        Sink { name: name.into(), budget: budget.clone(), handoff, buf: Vec::with_capacity(CHUNK_BYTES), here: Some((file, Sha256::new())), worker: None, bytes: 0 }
    }

    /// Hash and write the buffered bytes, here or on the worker.
    fn ship(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        if self.worker.is_none() && self.bytes >= self.handoff {
            self.hand_off();
        }
        if let Some(w) = &self.worker {
            let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK_BYTES));
            self.bytes += chunk.len() as u64;
            if w.jobs.send(Job::Chunk(chunk)).is_err() {
                // the worker stopped at an error, which its result holds
                return Err(self.take_worker_error());
            }
            return Ok(());
        }
        let (file, hash) = self.here.as_mut().expect("a sink writes here until it has a worker");
        hash.update(&self.buf);
        file.write_all(&self.buf)?;
        self.bytes += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Give the file and its hash to a thread, if the budget has one and it starts.
    fn hand_off(&mut self) {
        let Some(ticket) = self.budget.take() else { return };
        let (tx, rx) = sync_channel::<Job>(2);
        let Some(done) = spawn(ticket, move || work(rx)) else { return };
        let (file, hash) = self.here.take().expect("a sink without a worker has its file");
        // the receiver lives until the thread ends, and the thread waits for this first
        let _ = tx.send(Job::Start(file, hash, self.bytes));
        self.worker = Some(Worker { jobs: tx, done });
    }

    fn take_worker_error(&mut self) -> std::io::Error {
        match self.worker.take().map(|w| w.done.join()) {
            Some(Ok(Err(e))) => e,
            _ => std::io::Error::other(format!("{}: the writing thread stopped", self.name)),
        }
    }

    /// The file complete: its digest, and its flush under way on a thread (the worker's, or
    /// one of its own if the budget has one), else left to the seal.
    pub fn finish(mut self) -> std::io::Result<Written> {
        self.ship()?;
        let name = std::mem::take(&mut self.name);
        if let Some(w) = self.worker.take() {
            drop(w.jobs);
            return Ok(Written { name, state: State::Thread(w.done) });
        }
        let (file, hash) = self.here.take().expect("a sink without a worker has its file");
        let digest = Digest256 { bytes: self.bytes, sha256: hash.finalize().into() };
        Ok(Written { name, state: flush(file, digest, &self.budget) })
    }
}

/// A complete file's flush, on a thread of the budget if it has one (the thread flushes a
/// duplicate of the descriptor, so the file stays here if no thread starts).
fn flush(file: File, digest: Digest256, budget: &Budget) -> State {
    if let (Some(ticket), Ok(theirs)) = (budget.take(), file.try_clone()) {
        let d = digest.clone();
        if let Some(h) = spawn(ticket, move || theirs.sync_all().map(|_| d)) {
            return State::Thread(h);
        }
    }
    State::Unsynced(file, digest)
}

impl Write for Sink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let room = CHUNK_BYTES - self.buf.len();
        let n = data.len().min(room);
        self.buf.extend_from_slice(&data[..n]);
        if self.buf.len() >= CHUNK_BYTES {
            self.ship()?;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        // the bytes reach the file in whole chunks; `finish` ships the last one
        Ok(())
    }
}

/// Run `work` here while `files` are flushed to disk on at most `threads` threads (each thread
/// flushes its share one after the other): its result, and the flushes' (the first error), once
/// every flush has been waited for. A share whose thread cannot start is flushed here.
pub fn with_syncs<R>(files: &[File], threads: usize, work: impl FnOnce() -> R) -> (R, std::io::Result<()>) {
    if threads == 0 {
        let r = work();
        return (r, files.iter().map(File::sync_all).collect());
    }
    let threads = threads.min(files.len());
    let share = |t: usize| files.iter().skip(t).step_by(threads).map(File::sync_all).collect::<std::io::Result<()>>();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|t| std::thread::Builder::new().stack_size(STACK_BYTES).spawn_scoped(s, move || share(t))).collect();
        let r = work();
        let mut synced = Ok(());
        for (t, h) in handles.into_iter().enumerate() {
            let one = match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err(std::io::Error::other("an fsync thread panicked"))),
                Err(_) => share(t),
            };
            if synced.is_ok() {
                synced = one;
            }
        }
        (r, synced)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!(".tcplab-durable-{}-{name}", std::process::id()))
    }

    /// The budget never gives more threads than it has, and a ticket dropped gives its thread back.
    #[test]
    fn budget_caps_the_threads() {
        let b = Budget::new(2);
        let t1 = b.take().expect("first");
        let t2 = b.take().expect("second");
        assert!(b.take().is_none(), "a third thread past a budget of two");
        assert_eq!(b.left(), 0);
        drop(t1);
        assert_eq!(b.left(), 1);
        let t3 = b.take().expect("the thread given back");
        drop((t2, t3));
        assert_eq!(b.left(), 2);
    }

    /// A sink's digest is the SHA-256 of the bytes it wrote, whether it hashed them itself or
    /// handed them to a thread midway, and the file holds exactly those bytes; its threads are
    /// given back to the budget once it is waited for.
    #[test]
    fn sink_hashes_what_it_writes_here_and_on_its_thread() {
        let data: Vec<u8> = (0..(3 * CHUNK_BYTES + 123)).map(|i| (i * 7 % 251) as u8).collect();
        for (handoff, threads) in [(u64::MAX, 4), (0, 4), (CHUNK_BYTES as u64, 4), (0, 0)] {
            let path = temp(&format!("sink-{handoff}-{threads}"));
            let budget = Budget::new(threads);
            let mut sink = Sink::with_handoff("x", File::create(&path).unwrap(), &budget, handoff);
            for piece in data.chunks(1000) {
                sink.write_all(piece).unwrap();
            }
            let (digest, unsynced) = sink.finish().unwrap().wait().unwrap();
            let on_disk = std::fs::read(&path).unwrap();
            let _ = std::fs::remove_file(&path);
            assert_eq!(on_disk, data);
            assert_eq!(digest.bytes, data.len() as u64);
            assert_eq!(digest.sha256, <[u8; 32]>::from(Sha256::digest(&data)));
            // flushed on a thread when the budget had one, else left to the seal
            assert_eq!(unsynced.is_some(), threads == 0, "handoff {handoff}, threads {threads}");
            assert_eq!(budget.left(), threads, "every thread given back");
        }
    }

    /// An empty file's digest is SHA-256 of nothing.
    #[test]
    fn empty_sink() {
        let path = temp("empty");
        let sink = Sink::new("e", File::create(&path).unwrap(), &Budget::new(1));
        let (d, _) = sink.finish().unwrap().wait().unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(d.bytes, 0);
        assert_eq!(d.hex(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    /// A flush that fails on a thread comes back as the error (fsync of /dev/null: EINVAL), after
    /// the work and every other flush; with no thread, the flushes run here.
    #[test]
    fn with_syncs_reports_a_failed_flush() {
        let ok = File::open(std::env::current_exe().unwrap()).unwrap();
        for threads in [0, 1, 2, 8] {
            let files = vec![File::open(std::env::current_exe().unwrap()).unwrap(), File::open("/dev/null").unwrap(), ok.try_clone().unwrap()];
            let (r, synced) = with_syncs(&files, threads, || 42);
            assert_eq!(r, 42);
            assert_eq!(synced.expect_err("fsync of /dev/null fails").raw_os_error(), Some(libc::EINVAL), "{threads} threads");
        }
        let (_, synced) = with_syncs(&[ok], 4, || ());
        synced.expect("fsync of a regular file");
    }
}
