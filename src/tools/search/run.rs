//! One `search` run: the walk on the calling thread, the files it hands on
//! searched on worker threads (one per processor), and what they find merged
//! back in walk order, so that the result text is the same however the work
//! was shared. Owns the threads and the merge; stops them all once a limit is
//! reached or the call is cancelled. Reads nothing itself.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};

use grep_regex::RegexMatcher;
use tokio_util::sync::CancellationToken;

use super::Matcher;
use super::grep::{FileSearch, Found};
use super::results::{Flow, Met, Results};
use super::walk::{Step, Walk};
use crate::controls::one_line;
use crate::policy::ProtectedPaths;
use crate::tools::Project;
use crate::tools::fs::confine::DirEntry;

/// At most this many threads search files.
const MAX_WORKERS: usize = 8;
/// Files handed to a worker at once: fewer hand-overs between threads.
const BATCH: usize = 32;

/// Files to search, each with its place in walk order.
type Batch = Vec<(usize, String)>;
/// What their searches found, each with its place.
type FoundBatch = Vec<(usize, Found)>;

/// What one search looks at.
pub(super) struct Scope<'a> {
    pub(super) project: &'a Project,
    pub(super) protected: &'a ProtectedPaths,
    pub(super) matcher: &'a Matcher,
    pub(super) cancel: &'a CancellationToken,
    /// The searched path, project-relative.
    pub(super) root: &'a str,
}

/// Searches `scope.root`: a directory whose entries are `listed`, or the
/// file itself when `listed` is `None`.
pub(super) fn search(scope: &Scope<'_>, listed: Option<Vec<DirEntry>>) -> (Flow, Results) {
    let pattern = scope.matcher.pattern.as_ref();
    let mut results = Results::new(
        scope.root.to_string(),
        pattern.map(|p| p.text.clone()),
        scope.matcher.max_results,
    );
    let mut walk = Walk::new(
        scope.project,
        scope.protected,
        scope.matcher,
        scope.cancel,
        scope.root,
    );
    let Some(pattern) = pattern else {
        let mut step = |step: Step| match step {
            Step::File(path) => results.push(one_line(&path)),
            Step::Met(met) => results.met(met),
        };
        let flow = match listed {
            Some(entries) => walk.tree(entries, &mut step),
            None => walk.file(scope.root, &mut step),
        };
        return (flow, results);
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_WORKERS);
    let (jobs, job_queue) = mpsc::channel::<Batch>();
    let (found_tx, found) = mpsc::channel::<FoundBatch>();
    let job_queue = Mutex::new(job_queue);
    let stop = AtomicBool::new(false);
    let flow = std::thread::scope(|threads| {
        for _ in 0..workers {
            let found_tx = found_tx.clone();
            let (queue, stop) = (&job_queue, &stop);
            let matcher = &pattern.lines;
            threads.spawn(move || worker(scope, matcher, queue, found_tx, stop));
        }
        drop(found_tx);
        let mut merge = Merge::new(&mut results, jobs, found, scope.cancel);
        let mut step = |step: Step| merge.step(step);
        let walked = match listed {
            Some(entries) => walk.tree(entries, &mut step),
            None => walk.file(scope.root, &mut step),
        };
        let flow = match walked {
            Flow::Continue => merge.finish(),
            other => other,
        };
        stop.store(true, Ordering::Relaxed);
        flow
    });
    (flow, results)
}

/// One searching thread: takes files off the queue until it is closed, the
/// merge has had enough or the call is cancelled.
fn worker(
    scope: &Scope<'_>,
    matcher: &RegexMatcher,
    queue: &Mutex<Receiver<Batch>>,
    found: Sender<FoundBatch>,
    stop: &AtomicBool,
) {
    let mut search = FileSearch::new(scope.project, matcher, scope.matcher.max_results);
    loop {
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(batch) = job else {
            return;
        };
        let mut done = Vec::with_capacity(batch.len());
        for (index, path) in batch {
            if stop.load(Ordering::Relaxed) || scope.cancel.is_cancelled() {
                return;
            }
            done.push((index, search.file(&path)));
        }
        if found.send(done).is_err() {
            return;
        }
    }
}

/// The walk's steps not yet merged, in walk order.
enum Pending {
    /// The file handed to the workers as job `index`.
    File(usize),
    Met(Met),
}

/// Merges steps and search results into `Results` in walk order.
struct Merge<'r> {
    results: &'r mut Results,
    /// `None` once the walk is over: the workers then stop when the queue
    /// is empty.
    jobs: Option<Sender<Batch>>,
    /// The files not yet handed over.
    batch: Batch,
    found: Receiver<FoundBatch>,
    cancel: &'r CancellationToken,
    pending: VecDeque<Pending>,
    /// Results that came before the steps ahead of them were merged.
    early: HashMap<usize, Found>,
    next_job: usize,
}

impl<'r> Merge<'r> {
    fn new(
        results: &'r mut Results,
        jobs: Sender<Batch>,
        found: Receiver<FoundBatch>,
        cancel: &'r CancellationToken,
    ) -> Self {
        Self {
            results,
            jobs: Some(jobs),
            batch: Vec::with_capacity(BATCH),
            found,
            cancel,
            pending: VecDeque::new(),
            early: HashMap::new(),
            next_job: 0,
        }
    }

    /// Takes one step of the walk, and merges what is ready.
    fn step(&mut self, step: Step) -> Flow {
        if self.cancel.is_cancelled() {
            return Flow::Cancelled;
        }
        match step {
            Step::Met(met) => self.pending.push_back(Pending::Met(met)),
            Step::File(path) => {
                let index = self.next_job;
                self.next_job += 1;
                self.batch.push((index, path));
                self.pending.push_back(Pending::File(index));
                if self.batch.len() >= BATCH && !self.hand_over() {
                    return Flow::Cancelled;
                }
            }
        }
        while let Ok(found) = self.found.try_recv() {
            self.early.extend(found);
        }
        self.merge_ready()
    }

    /// Hands the files gathered so far to the workers; false when every
    /// worker is gone (only a cancelled call does that).
    fn hand_over(&mut self) -> bool {
        if self.batch.is_empty() {
            return true;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        self.jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(batch).is_ok())
    }

    /// Merges the pending steps from the front for as long as their results
    /// are in.
    fn merge_ready(&mut self) -> Flow {
        while let Some(next) = self.pending.front() {
            let flow = match next {
                Pending::Met(met) => self.results.met(*met),
                Pending::File(index) => match self.early.remove(index) {
                    Some(found) => self.results.file(found),
                    None => return Flow::Continue,
                },
            };
            self.pending.pop_front();
            if flow != Flow::Continue {
                return flow;
            }
        }
        Flow::Continue
    }

    /// After the walk: waits for the rest of the results and merges them.
    fn finish(&mut self) -> Flow {
        if !self.hand_over() {
            return Flow::Cancelled;
        }
        self.jobs = None;
        loop {
            let flow = self.merge_ready();
            if flow != Flow::Continue || self.pending.is_empty() {
                return flow;
            }
            if self.cancel.is_cancelled() {
                return Flow::Cancelled;
            }
            match self.found.recv() {
                Ok(found) => self.early.extend(found),
                // The workers stopped before finishing: cancelled.
                Err(_) => return Flow::Cancelled,
            }
        }
    }
}
